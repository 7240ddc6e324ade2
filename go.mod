module github.com/cardflow/cardflow

go 1.26.8

require (
	github.com/oklog/ulid/v2 v2.1.2
	go.etcd.io/bbolt v1.5.0
)

require golang.org/x/sys v0.45.0 // indirect
