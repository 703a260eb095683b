#!/bin/bash
# build the █
make
