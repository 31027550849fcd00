module github.com/engram-dev/engram

go 1.26
