#!/bin/sh
# Stands in for ptxas in ptxas-strict.test: a serialization message without
# a C75xx code, and succeeds.
echo "ptxas info    : Potential Performance Loss: wgmma.mma_async instructions are serialized in the function 'k'" >&2
exit 0
