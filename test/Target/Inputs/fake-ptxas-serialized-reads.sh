#!/bin/sh
# Stands in for ptxas in ptxas-strict.test: the serialization warning for
# accumulators read before their wgmma completed (C7514), and succeeds.
echo "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions reading accumulator registers of  a wgmma between start and end of the pipeline stage in the function 'k'" >&2
exit 0
