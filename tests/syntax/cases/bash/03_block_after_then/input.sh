#!/bin/bash
if [ -f "$1" ]; then█
fi
