package controller

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// gvkOf is o's kind as c's scheme knows it: typed objects built in Go
// carry none, and server-side apply needs it.
func gvkOf(c client.Client, o client.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(o, c.Scheme())
}
