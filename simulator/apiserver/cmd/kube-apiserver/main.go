// Command kube-apiserver is the upstream Kubernetes API server, built from the module k8s.io/kubernetes at the
// version pinned in go.mod, for the tests, the demo and `bin/npu-lifecycle cluster --api real`.
package main

import (
	"io.npulifecycle/simulator/apiserver/internal/parentwatch"
	"os"
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	parentwatch.Start() // stop with the JVM that started this server, even after its SIGKILL
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
