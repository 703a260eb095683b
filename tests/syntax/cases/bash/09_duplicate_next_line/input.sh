#!/bin/bash
set -e
█
make all
