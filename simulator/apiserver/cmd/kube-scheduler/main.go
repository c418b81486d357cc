// Command kube-scheduler is the upstream Kubernetes scheduler, built from the module k8s.io/kubernetes at the version
// pinned in go.mod. RealApiServer (simulator/cluster) runs it beside kube-controller-manager when a real node is
// attached: the Deployment and DaemonSet controllers create pods that only a scheduler binds to the node.
package main

import (
	"os"
	_ "time/tzdata"

	"io.npulifecycle/simulator/apiserver/internal/parentwatch"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	parentwatch.Start() // stop with the JVM that started this scheduler, even after its SIGKILL
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
