package controller

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

func apiutilGVK(c client.Client, o client.Object) (schema.GroupVersionKind, error) {
	return apiutil.GVKForObject(o, c.Scheme())
}

func apiequality(a, b *sipv1.SIPClusterStatus) bool { return equality.Semantic.DeepEqual(a, b) }
