module topogate/apiload

go 1.19
