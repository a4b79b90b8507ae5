package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	kjson "sigs.k8s.io/json"
)

// maxBody bounds a request body: user-data travels in InsertMedia.
const maxBody = 4 << 20

// readBody reads a request body up to maxBody.
func readBody(r *http.Request) ([]byte, *apiError) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, errMalformed("the request body could not be read")
	}
	if len(data) > maxBody {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, id: "GeneralError", msg: fmt.Sprintf("the request body exceeds %d bytes", maxBody)}
	}
	if !utf8.Valid(data) {
		return nil, errMalformed("the request body is not UTF-8")
	}
	return data, nil
}

// decodeStrict decodes a JSON object case-sensitively into v, refusing
// unknown and duplicate properties. Errors name properties, never values:
// a client may put a secret in the wrong place.
func decodeStrict(data []byte, v any, unknownID string) *apiError {
	if len(strings.TrimSpace(string(data))) == 0 {
		return errMalformed("the request body is empty; a JSON object is expected")
	}
	strict, err := kjson.UnmarshalStrict(data, v)
	if err != nil {
		// The decoder's own messages may quote a value (a number given
		// for a password): say where, not what.
		if ok, off := kjson.SyntaxErrorOffset(err); ok {
			return errMalformed(fmt.Sprintf("the request body is not valid JSON (syntax error at byte %d)", off))
		}
		return &apiError{status: http.StatusBadRequest, id: "PropertyValueTypeError", msg: "the request body does not have the expected form: not an object, or a property of the wrong type"}
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return &apiError{status: http.StatusBadRequest, id: unknownID, msg: strings.Join(msgs, "; ")}
	}
	return nil
}

// resetRequest is the body of ComputerSystem.Reset.
type resetRequest struct {
	ResetType *string `json:"ResetType"`
}

// decodeReset returns the reset type of a ComputerSystem.Reset body.
func decodeReset(data []byte) (string, *apiError) {
	var req resetRequest
	if e := decodeStrict(data, &req, "ActionParameterUnknown"); e != nil {
		return "", e
	}
	if req.ResetType == nil {
		return "", &apiError{status: http.StatusBadRequest, id: "ActionParameterMissing", msg: "the action ComputerSystem.Reset requires the parameter ResetType"}
	}
	if !slices.Contains(resetTypes, *req.ResetType) {
		return "", &apiError{status: http.StatusBadRequest, id: "ActionParameterValueNotInList",
			msg: "the value of ResetType is not one of " + strings.Join(resetTypes, ", ")}
	}
	return *req.ResetType, nil
}

// bootPatch is what a PATCH of a ComputerSystem changes.
type bootPatch struct {
	Target, Enabled, Mode *string
}

// Boot override values the systems accept.
var (
	bootTargets = []string{"None", "Pxe", "Cd", "Hdd"}
	bootEnabled = []string{"Disabled", "Once", "Continuous"}
	bootModes   = []string{"UEFI", "Legacy"}
)

// decodeBootPatch reads a PATCH of a ComputerSystem: only Boot's
// BootSourceOverrideTarget, BootSourceOverrideEnabled and
// BootSourceOverrideMode are writable. Annotations (names holding "@",
// such as a copy of the allowable values) are ignored.
func decodeBootPatch(data []byte) (bootPatch, *apiError) {
	var top map[string]json.RawMessage
	if e := decodeStrict(data, &top, "PropertyUnknown"); e != nil {
		return bootPatch{}, e
	}
	if top == nil {
		return bootPatch{}, errMalformed("the request body is not a JSON object")
	}
	var p bootPatch
	for _, k := range sortedKeys(top) {
		if strings.Contains(k, "@") {
			continue
		}
		if k != "Boot" {
			return bootPatch{}, errNotWritable(k)
		}
		var boot map[string]json.RawMessage
		if e := decodeStrict(top[k], &boot, "PropertyUnknown"); e != nil {
			return bootPatch{}, e
		}
		if boot == nil {
			return bootPatch{}, &apiError{status: http.StatusBadRequest, id: "PropertyValueTypeError", msg: "Boot must be an object"}
		}
		for _, bk := range sortedKeys(boot) {
			var dst **string
			var allowed []string
			switch {
			case strings.Contains(bk, "@"):
				continue
			case bk == "BootSourceOverrideTarget":
				dst, allowed = &p.Target, bootTargets
			case bk == "BootSourceOverrideEnabled":
				dst, allowed = &p.Enabled, bootEnabled
			case bk == "BootSourceOverrideMode":
				dst, allowed = &p.Mode, bootModes
			default:
				return bootPatch{}, errNotWritable("Boot/" + bk)
			}
			v, e := enumValue(boot[bk], "Boot/"+bk, allowed, "PropertyValueNotInList")
			if e != nil {
				return bootPatch{}, e
			}
			*dst = &v
		}
	}
	return p, nil
}

// enumValue decodes a JSON string that must be one of allowed.
func enumValue(raw json.RawMessage, name string, allowed []string, notInList string) (string, *apiError) {
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", &apiError{status: http.StatusBadRequest, id: "PropertyValueTypeError", msg: fmt.Sprintf("the value of %s must be a string", name)}
	}
	if !slices.Contains(allowed, v) {
		return "", &apiError{status: http.StatusBadRequest, id: notInList,
			msg: fmt.Sprintf("the value of %s is not one of %s", name, strings.Join(allowed, ", "))}
	}
	return v, nil
}

// insertMediaRequest is the body of VirtualMedia.InsertMedia.
type insertMediaRequest struct {
	Image                *string `json:"Image"`
	Inserted             *bool   `json:"Inserted"`
	WriteProtected       *bool   `json:"WriteProtected"`
	TransferMethod       *string `json:"TransferMethod"`
	TransferProtocolType *string `json:"TransferProtocolType"`
	UserName             *string `json:"UserName"`
	Password             *string `json:"Password"`
	MediaType            *string `json:"MediaType"`
	// Oem is accepted and ignored, whatever its vendors, as a BMC does
	// with vendor sections it does not know.
	Oem map[string]json.RawMessage `json:"Oem"`
}

// Values InsertMedia accepts.
var (
	transferMethods   = []string{"Stream", "Upload"}
	transferProtocols = []string{"CIFS", "FTP", "SFTP", "HTTP", "HTTPS", "NFS", "SCP", "TFTP", "OEM"}
	mediaTypes        = []string{"CD", "DVD"}
)

// decodeInsertMedia reads a VirtualMedia.InsertMedia body.
func decodeInsertMedia(data []byte) (Media, *apiError) {
	var req insertMediaRequest
	if e := decodeStrict(data, &req, "ActionParameterUnknown"); e != nil {
		return Media{}, e
	}
	if req.Image == nil || *req.Image == "" {
		return Media{}, &apiError{status: http.StatusBadRequest, id: "ActionParameterMissing", msg: "the action VirtualMedia.InsertMedia requires the parameter Image"}
	}
	u, err := url.Parse(*req.Image)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Media{}, &apiError{status: http.StatusBadRequest, id: "ActionParameterValueFormatError", msg: "the parameter Image must be an http or https URL"}
	}
	m := Media{Inserted: true, Image: *req.Image, WriteProtected: true, TransferMethod: "Stream"}
	if req.Inserted != nil {
		m.Inserted = *req.Inserted
	}
	if req.WriteProtected != nil {
		m.WriteProtected = *req.WriteProtected
	}
	if e := checkEnum(req.TransferMethod, "TransferMethod", transferMethods); e != nil {
		return Media{}, e
	}
	if req.TransferMethod != nil {
		m.TransferMethod = *req.TransferMethod
	}
	if e := checkEnum(req.TransferProtocolType, "TransferProtocolType", transferProtocols); e != nil {
		return Media{}, e
	}
	if e := checkEnum(req.MediaType, "MediaType", mediaTypes); e != nil {
		return Media{}, e
	}
	return m, nil
}

// checkEnum checks an optional parameter against its allowed values.
func checkEnum(v *string, name string, allowed []string) *apiError {
	if v == nil {
		return nil
	}
	_, e := enumValue(mustJSON(*v), name, allowed, "ActionParameterValueNotInList")
	return e
}

// decodeNoParameters reads the body of an action without parameters
// (VirtualMedia.EjectMedia): empty or an empty object.
func decodeNoParameters(data []byte, action string) *apiError {
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if e := decodeStrict(data, &m, "ActionParameterUnknown"); e != nil {
		return e
	}
	if m == nil {
		return errMalformed("the request body is not a JSON object")
	}
	for _, k := range sortedKeys(m) {
		if !strings.Contains(k, "@") {
			return &apiError{status: http.StatusBadRequest, id: "ActionParameterNotSupported", msg: fmt.Sprintf("the action %s takes no parameter %s", action, quoteShort(k))}
		}
	}
	return nil
}

// sessionRequest is the body creating a session.
type sessionRequest struct {
	UserName *string `json:"UserName"`
	Password *string `json:"Password"`
}

// decodeSession returns the credentials of a session creation request.
func decodeSession(data []byte) (username, password string, e *apiError) {
	var req sessionRequest
	if e := decodeStrict(data, &req, "PropertyUnknown"); e != nil {
		return "", "", e
	}
	if req.UserName == nil || req.Password == nil {
		return "", "", &apiError{status: http.StatusBadRequest, id: "PropertyMissing", msg: "creating a session requires UserName and Password"}
	}
	return *req.UserName, *req.Password, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// quoteShort quotes a client-supplied value for a message, cut at 64 bytes.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return fmt.Sprintf("%q", s)
}
