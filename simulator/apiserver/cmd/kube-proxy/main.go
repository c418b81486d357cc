// Command kube-proxy is the upstream Kubernetes service proxy, built from the module k8s.io/kubernetes at the version
// pinned in go.mod. kubenode (cmd/kubenode) starts it in nftables mode for a real node on the test machine: pods
// reach kube-apiserver through the kubernetes Service (10.0.0.1:443), as in-cluster clients do.
package main

import (
	"os"
	_ "time/tzdata"

	"io.npulifecycle/simulator/apiserver/internal/parentwatch"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-proxy/app"
)

func main() {
	parentwatch.Start() // stop with the kubenode that started this proxy, even after its SIGKILL
	os.Exit(cli.Run(app.NewProxyCommand()))
}
