module kwq.dev/kwq

go 1.19
