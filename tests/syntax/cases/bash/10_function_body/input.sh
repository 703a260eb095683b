#!/bin/bash
build() {
    █
}
