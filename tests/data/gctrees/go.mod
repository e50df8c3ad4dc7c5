module gctrees

go 1.19
