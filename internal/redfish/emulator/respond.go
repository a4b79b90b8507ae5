package emulator

import (
	"encoding/json"
	"net/http"
)

// baseRegistry prefixes the DMTF Base message registry's message ids.
const baseRegistry = "Base.1.16."

// apiError is a Redfish error response.
type apiError struct {
	status int
	// id is a message of the Base registry (PropertyUnknown, ...).
	id  string
	msg string
}

func errMalformed(msg string) *apiError {
	return &apiError{status: http.StatusBadRequest, id: "MalformedJSON", msg: msg}
}

func errNotWritable(prop string) *apiError {
	return &apiError{status: http.StatusBadRequest, id: "PropertyNotWritable", msg: "the property " + quoteShort(prop) + " is not writable here"}
}

func errNotFound(path string) *apiError {
	return &apiError{status: http.StatusNotFound, id: "ResourceNotFound", msg: "no resource at " + quoteShort(path)}
}

func errNoSession() *apiError {
	return &apiError{status: http.StatusUnauthorized, id: "NoValidSession", msg: "authentication required: a valid X-Auth-Token or basic credentials"}
}

type obj = map[string]any

func link(path string) obj { return obj{"@odata.id": path} }

func links(paths ...string) []obj {
	out := make([]obj, len(paths))
	for i, p := range paths {
		out[i] = link(p)
	}
	return out
}

// collection renders a resource collection.
func collection(path, odataType, name string, members []string) obj {
	return obj{
		"@odata.id":           path,
		"@odata.type":         "#" + odataType + "." + odataType,
		"Name":                name,
		"Members@odata.count": len(members),
		"Members":             links(members...),
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, &apiError{status: http.StatusInternalServerError, id: "InternalError", msg: "rendering the response failed"})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("OData-Version", "4.0")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="redfish-emulator"`)
	}
	writeJSON(w, e.status, obj{"error": obj{
		"code":    baseRegistry + "GeneralError",
		"message": "A general error has occurred. See ExtendedInfo for more information.",
		"@Message.ExtendedInfo": []obj{{
			"@odata.type": "#Message.v1_1_1.Message",
			"MessageId":   baseRegistry + e.id,
			"Message":     e.msg,
			"Severity":    "Critical",
		}},
	}})
}

func noContent(w http.ResponseWriter) {
	w.Header().Set("OData-Version", "4.0")
	w.WriteHeader(http.StatusNoContent)
}
