#!/bin/bash
for f in *.txt; do█
done
