#!/bin/bash
set -e
█
echo done
