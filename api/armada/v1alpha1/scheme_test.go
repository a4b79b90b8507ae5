/*
Copyright The Airship-Go Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1_test

import (
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	armadav1alpha1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

func TestAddToScheme(t *testing.T) {
	s := runtime.NewScheme()
	if err := armadav1alpha1.AddToScheme(s); err != nil {
		t.Fatalf("AddToScheme: %v", err)
	}

	want := map[string]runtime.Object{
		"ArmadaChart":          &armadav1alpha1.ArmadaChart{},
		"ArmadaChartList":      &armadav1alpha1.ArmadaChartList{},
		"ArmadaChartGroup":     &armadav1alpha1.ArmadaChartGroup{},
		"ArmadaChartGroupList": &armadav1alpha1.ArmadaChartGroupList{},
		"ArmadaManifest":       &armadav1alpha1.ArmadaManifest{},
		"ArmadaManifestList":   &armadav1alpha1.ArmadaManifestList{},
	}
	gv := armadav1alpha1.GroupVersion
	if gv.String() != "armada.airshipit.org/v1alpha1" {
		t.Errorf("GroupVersion = %s", gv)
	}

	for kind, typ := range want {
		gvk := gv.WithKind(kind)
		obj, err := s.New(gvk)
		if err != nil {
			t.Errorf("New(%s): %v", gvk, err)
			continue
		}
		if reflect.TypeOf(obj) != reflect.TypeOf(typ) {
			t.Errorf("New(%s) = %T, want %T", gvk, obj, typ)
		}
		gvks, _, err := s.ObjectKinds(typ)
		if err != nil || !slices.Contains(gvks, gvk) {
			t.Errorf("ObjectKinds(%T) = %v, %v; want %s", typ, gvks, err, gvk)
		}
	}

	// AddToGroupVersion also registers meta kinds (WatchEvent, options) in the
	// group; only kinds declared in this package are counted here.
	pkg := reflect.TypeOf(armadav1alpha1.ArmadaChart{}).PkgPath()
	var own []string
	for kind, typ := range s.KnownTypes(gv) {
		if typ.PkgPath() == pkg {
			own = append(own, kind)
		}
	}
	if len(own) != len(want) {
		slices.Sort(own)
		t.Errorf("kinds registered from this package = %v, want the %d above", own, len(want))
	}
}
