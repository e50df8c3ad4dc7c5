module gmpcalib

go 1.19
