// Command etcd is the upstream etcd server (go.etcd.io/etcd/server/v3 etcdmain) at the version k8s.io/kubernetes
// pins in go.mod, the storage of the real API server.
package main

import (
	"io.npulifecycle/simulator/apiserver/internal/parentwatch"
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	parentwatch.Start() // stop with the JVM that started this server, even after its SIGKILL
	etcdmain.Main(os.Args)
}
