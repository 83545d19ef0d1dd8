// kubectl of the same version as the apiserver (k8s.io/kubectl, a staging module of k8s.io/kubernetes).
package main

import (
	"os"

	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	_, _ = logs.GlogSetter(cmd.GetLogVerbosity(os.Args))
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
