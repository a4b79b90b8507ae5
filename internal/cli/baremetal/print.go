package baremetal

import (
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"

	"github.com/airshipit/airship-go/internal/cli/output"
	"github.com/airshipit/airship-go/internal/hostops"
)

// hostRow is one host of listhosts.
type hostRow struct {
	Namespace         string            `json:"namespace"`
	Name              string            `json:"name"`
	State             string            `json:"state"`
	OperationalStatus string            `json:"operationalStatus"`
	Online            bool              `json:"online"`
	PoweredOn         bool              `json:"poweredOn"`
	BMC               string            `json:"bmc"`
	Labels            map[string]string `json:"labels,omitempty"`
}

func printHosts(w io.Writer, format string, list []metal3v1alpha1.BareMetalHost) error {
	rows := make([]hostRow, 0, len(list))
	for _, h := range list {
		rows = append(rows, hostRow{
			Namespace: h.Namespace, Name: h.Name,
			State:             string(h.Status.Provisioning.State),
			OperationalStatus: string(h.Status.OperationalStatus),
			Online:            h.Spec.Online, PoweredOn: h.Status.PoweredOn,
			BMC: hostops.SafeAddress(h.Spec.BMC.Address), Labels: h.Labels,
		})
	}
	return output.Print(w, format, rows, func(tw *tabwriter.Writer) {
		output.Row(tw, "NAMESPACE", "NAME", "STATE", "OPERATIONAL", "ONLINE", "POWERED ON", "BMC", "LABELS")
		for _, r := range rows {
			output.Row(tw, r.Namespace, r.Name, dash(r.State), dash(r.OperationalStatus), r.Online, r.PoweredOn, r.BMC, labels(r.Labels))
		}
	})
}

func printResults(w io.Writer, format string, results []hostops.Result) error {
	return output.Print(w, format, results, func(tw *tabwriter.Writer) {
		output.Row(tw, "NAMESPACE", "NAME", "POWER", "MEDIA", "BMC", "ERROR")
		for _, r := range results {
			media := "-"
			if r.Media != nil {
				media = "none"
				if r.Media.Inserted {
					media = r.Media.Image
				}
			}
			output.Row(tw, r.Namespace, r.Name, dash(string(r.PowerState)), media, dash(r.BMC), r.Error)
		}
	})
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func labels(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
