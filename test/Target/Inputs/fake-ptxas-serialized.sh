#!/bin/sh
# Stands in for ptxas in ptxas-strict.test: warns as ptxas does when it
# serializes wgmma, and succeeds.
echo "ptxas warning : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to the presence of Extern calls in the function" >&2
exit 0
