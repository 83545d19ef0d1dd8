// shardparse: k8s.io/apiserver's shard selector parser (pkg/sharding, v0.37.2) and the hash of
// k8s.io/apimachinery/pkg/sharding, as an oracle for the local cluster's tests. Each input line is a
// JSON string; each output line is a JSON object: the selector's normalised form or the error text
// kube-apiserver puts after "invalid shard selector: ", and the FNV-1a hash of the same string.
//
//	cd tools/envtest/1.37.2 && GOTOOLCHAIN=local go run ./shardparse < selectors.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	apisharding "k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apiserver/pkg/sharding"
)

type answer struct {
	Input      string `json:"input"`
	Normalized string `json:"normalized,omitempty"`
	Error      string `json:"error,omitempty"`
	Hash       string `json:"hash"`
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	out := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		var input string
		if err := json.Unmarshal(scanner.Bytes(), &input); err != nil {
			fmt.Fprintln(os.Stderr, "not a JSON string:", scanner.Text())
			os.Exit(2)
		}
		a := answer{Input: input, Hash: apisharding.HashField(input)}
		if sel, err := sharding.Parse(input); err != nil {
			a.Error = err.Error()
		} else {
			a.Normalized = sel.String()
		}
		if err := out.Encode(a); err != nil {
			os.Exit(1)
		}
	}
}
