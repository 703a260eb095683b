#!/bin/bash
name=█
echo "$name"
