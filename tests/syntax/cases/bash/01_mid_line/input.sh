#!/bin/bash
cp █ /tmp/out
