#!/bin/bash
echo "hello █"
