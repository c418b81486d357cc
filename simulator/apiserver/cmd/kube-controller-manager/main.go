// Command kube-controller-manager is the upstream Kubernetes controller manager, built from the module
// k8s.io/kubernetes at the version pinned in go.mod. The simulator starts it with only the controllers the
// simulated cluster needs (RealApiServer in simulator/cluster names them): the disruption controller computes
// PodDisruptionBudget status, without which the Eviction API refuses every pod a budget selects.
package main

import (
	"io.npulifecycle/simulator/apiserver/internal/parentwatch"
	"os"
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	parentwatch.Start() // stop with the JVM that started this controller manager, even after its SIGKILL
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
