// etcd at the version k8s.io/kubernetes pins (see ../go.mod), in a module of its own so that
// its dependencies do not move those of the apiserver.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
