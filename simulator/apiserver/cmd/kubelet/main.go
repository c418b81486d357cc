// Command kubelet is the upstream Kubernetes node agent, built from the module k8s.io/kubernetes at the version pinned
// in go.mod. kubenode (cmd/kubenode) starts it for a real node on the test machine (RealNode in simulator/cluster):
// it registers the machine as a node and runs the chart's pods through containerd.
package main

import (
	"context"
	"os"
	_ "time/tzdata"

	"io.npulifecycle/simulator/apiserver/internal/parentwatch"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	parentwatch.Start() // stop with the kubenode that started this kubelet, even after its SIGKILL
	os.Exit(cli.Run(app.NewKubeletCommand(context.Background())))
}
