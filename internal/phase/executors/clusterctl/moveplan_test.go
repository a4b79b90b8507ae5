package clusterctl

import (
	"strings"
	"testing"
)

// What a move to cluster "target" does with a namespace in each state its
// annotations on the source can be in.
func TestPlanMove(t *testing.T) {
	tests := []struct {
		name string
		ns   sourceNamespace
		want moveAction
		// err, when set, is what the error must say (all of it, in
		// pieces); the move then does nothing.
		err []string
	}{
		{name: "no annotation", ns: sourceNamespace{exists: true}, want: moveStart},
		{name: "moving-to this cluster: a run stopped half-way", ns: sourceNamespace{exists: true, movingTo: "target", movingPhase: "move"}, want: moveResume},
		{name: "moved-to this cluster", ns: sourceNamespace{exists: true, movedTo: "target"}, want: moveSkip},
		{name: "moved-to wins over a leftover moving-to", ns: sourceNamespace{exists: true, movedTo: "target", movingTo: "target"}, want: moveSkip},
		{name: "moving-to another cluster", ns: sourceNamespace{exists: true, movingTo: "other", movingPhase: "move-other"},
			err: []string{`phase "move"`, `namespace "ns"`, `cluster "ephemeral"`, `is being moved to cluster "other", not "target"`, "airshipit.org/moving-to", `set by phase "move-other"`}},
		{name: "moved-to another cluster", ns: sourceNamespace{exists: true, movedTo: "other"},
			err: []string{`phase "move"`, `namespace "ns"`, `cluster "ephemeral"`, `was moved to cluster "other", not "target"`, "airshipit.org/moved-to"}},
		{name: "moving-to this cluster, moved-to another", ns: sourceNamespace{exists: true, movedTo: "other", movingTo: "target"},
			err: []string{`was moved to cluster "other", not "target"`}},
		{name: "not on the source", ns: sourceNamespace{},
			err: []string{`phase "move"`, `namespace "ns" is not on cluster "ephemeral"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.ns.name = "ns"
			// A namespace of the source's own goes first: a refused one
			// stops the whole move, not only itself.
			steps, err := planMove("move", "ephemeral", "target", []sourceNamespace{{name: "first", exists: true}, tt.ns})
			if tt.err != nil {
				if err == nil {
					t.Fatalf("steps %+v, want an error", steps)
				}
				for _, want := range tt.err {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if steps != nil {
					t.Errorf("steps %+v beside the error, want none", steps)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := []moveStep{{ns: "first", action: moveStart}, {ns: "ns", action: tt.want}}
			if len(steps) != 2 || steps[0] != want[0] || steps[1] != want[1] {
				t.Errorf("steps %+v, want %+v", steps, want)
			}
		})
	}
}

// Every refused namespace is named at once, in order.
func TestPlanMoveNamesEveryRefusal(t *testing.T) {
	_, err := planMove("move", "ephemeral", "target", []sourceNamespace{
		{name: "a", exists: true, movedTo: "x"}, {name: "b", exists: true}, {name: "c"},
	})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if a, c := strings.Index(msg, `namespace "a"`), strings.Index(msg, `namespace "c"`); a < 0 || c < a || strings.Contains(msg, `namespace "b"`) {
		t.Errorf("error %q, want namespaces a then c named, and b not", msg)
	}
}
