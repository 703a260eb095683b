#!/bin/bash
echo "$fi«len»ame"
