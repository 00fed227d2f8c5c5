// openapicheck reads a server's /openapi/v2 in protobuf as kubectl 1.20 does (client-go's
// OpenAPISchema, kube-openapi's models, kubectl's resources) and validates four objects with
// kubectl's client-side schema validation; scripts/kubectl-openapi-compare.sh runs it against
// each server and compares what it prints.
package main

import (
	"fmt"
	"os"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kubectl/pkg/util/openapi"
	"k8s.io/kubectl/pkg/util/openapi/validation"
	"k8s.io/kube-openapi/pkg/util/proto"
)

func main() {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Args[1])
	if err != nil {
		panic(err)
	}
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	doc, err := dc.OpenAPISchema()
	if err != nil {
		fmt.Println("OpenAPISchema:", err)
		os.Exit(1)
	}
	models, err := proto.NewOpenAPIData(doc)
	if err != nil {
		fmt.Println("NewOpenAPIData:", err)
		os.Exit(1)
	}
	fmt.Println("models:", len(models.ListModels()), "paths:", len(doc.GetPaths().GetPath()))
	res, err := openapi.NewOpenAPIData(doc)
	if err != nil {
		fmt.Println("kubectl NewOpenAPIData:", err)
		os.Exit(1)
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "", Version: "v1", Kind: "ConfigMap"},
		{Group: "example.kcache.dev", Version: "v1", Kind: "Widget"},
	} {
		s := res.LookupResource(gvk)
		if s == nil {
			fmt.Println(gvk, "-> none")
			continue
		}
		k, ok := s.(*proto.Kind)
		if !ok {
			fmt.Println(gvk, "->", s.GetPath())
			continue
		}
		keys := k.Keys()
		sort.Strings(keys)
		fmt.Println(gvk, "->", k.GetPath(), keys, k.RequiredFields)
		if spec, ok := k.Fields["spec"]; ok {
			fmt.Println("  spec:", spec.GetDescription() != "", describe(spec))
		}
	}
	v := validation.NewSchemaValidation(res)
	for _, obj := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"b"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":1},"bogus":1}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"replicas":"two","selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":"80"}]}]}}}}`,
		`{"apiVersion":"example.kcache.dev/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"replicas":"x","tags":[1],"extra":{"any":1}}}`,
	} {
		fmt.Println("validate:", v.ValidateBytes([]byte(obj)))
	}
}

func describe(s proto.Schema) string {
	if k, ok := s.(*proto.Kind); ok {
		keys := k.Keys()
		sort.Strings(keys)
		return fmt.Sprint(keys)
	}
	if r, ok := s.(proto.Reference); ok {
		return "ref " + r.Reference()
	}
	return fmt.Sprintf("%T", s)
}
