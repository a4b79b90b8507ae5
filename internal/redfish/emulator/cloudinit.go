package emulator

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/pki"
)

// Where Cluster API's kubeadm bootstrap provider (CABPK) writes kubeadm's
// configuration and the cluster CA, and kubeadm's defaults.
const (
	kubeadmInitConfigPath  = "/run/kubeadm/kubeadm.yaml"
	kubeadmJoinConfigPath  = "/run/kubeadm/kubeadm-join-config.yaml"
	defaultCertificatesDir = "/etc/kubernetes/pki"
	defaultAPIServerPort   = 6443
	kubeadmGroup           = "kubeadm.k8s.io"
)

// maxFileBytes bounds a decoded write_files entry: gzip may expand far
// beyond the request body.
const maxFileBytes = maxBody

// Why a host's user-data yields no kubeadm bootstrap. Messages never quote
// the user-data: it holds keys and tokens.
var (
	errNotCloudConfig = errors.New("the user-data is not a #cloud-config document")
	errNoKubeadm      = errors.New("the user-data writes no kubeadm configuration")
	errUserData       = errors.New("the user-data cannot be read")
)

// kubeadmBoot is what cloud-init, kubeadm and the kubelet would make of a
// host's user-data: the cluster the host joins and the Node it registers.
type kubeadmBoot struct {
	// join: kubeadm join; else kubeadm init.
	join bool
	// endpoint is the API server's URL (https://host:port); empty when
	// the configuration names none.
	endpoint string
	// ca is the cluster CA when the user-data carries its certificate
	// and key (a control-plane host's).
	ca *pki.KeyPair
	// token: the host joins with a bootstrap token (never kept).
	token bool
	// nodeName, providerID and nodeIP are empty when not given or not
	// valid (a note says which).
	nodeName, providerID, nodeIP string
	labels                       map[string]string
	// clusterConfig is the ClusterConfiguration document of a kubeadm
	// init, which kubeadm uploads to the cluster (kubeadm-config).
	clusterConfig []byte
	// notes are what the host would have complained about, for the log.
	notes []string
}

// describe summarizes the bootstrap for the log, without secrets.
func (b *kubeadmBoot) describe() string {
	verb := "init"
	if b.join {
		verb = "join"
	}
	where := b.endpoint
	if where == "" {
		where = "no API endpoint"
	}
	var creds []string
	if b.ca != nil {
		creds = append(creds, "the cluster CA")
	}
	if b.token {
		creds = append(creds, "a bootstrap token")
	}
	if len(creds) == 0 {
		creds = append(creds, "no credentials")
	}
	name := b.nodeName
	if name == "" {
		name = "(no nodeRegistration.name)"
	}
	return fmt.Sprintf("kubeadm %s of %s as %s, with %s", verb, where, name, strings.Join(creds, " and "))
}

// parseUserData reads a #cloud-config user-data as cloud-init, then
// kubeadm, would: meta-data references ({{ ds.meta_data.<key> }}) are
// substituted first, then write_files gives kubeadm's configuration (the
// --config of the kubeadm in runcmd, else CABPK's paths) and the cluster
// CA. It fails with errNotCloudConfig or errNoKubeadm when there is
// nothing for kubeadm, or an error wrapping errUserData that names what is
// wrong but quotes nothing of the user-data.
func parseUserData(userData []byte, meta map[string]any) (*kubeadmBoot, error) {
	b := &kubeadmBoot{}
	doc, err := b.readCloudConfig(userData, meta)
	if err != nil {
		return nil, err
	}
	files, err := writeFiles(doc["write_files"])
	if err != nil {
		return nil, err
	}
	mode, cfg, err := readKubeadmConfigs(files, doc["runcmd"])
	if err != nil {
		return nil, err
	}
	if b.join, err = joins(mode, cfg); err != nil {
		return nil, err
	}
	var reg *nodeRegistration
	if b.join {
		reg = cfg.join.NodeRegistration
		err = b.joinEndpoint(cfg.join.Discovery)
	} else {
		if cfg.init != nil {
			reg = cfg.init.NodeRegistration
		}
		err = b.initEndpoint(cfg)
		if cfg.cluster != nil {
			b.clusterConfig = cfg.cluster.raw
		}
	}
	if err != nil {
		return nil, err
	}
	if err := b.readCA(files, cfg); err != nil {
		return nil, err
	}
	if reg != nil {
		if err := b.readNodeRegistration(reg); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// readCloudConfig substitutes the meta-data references of a #cloud-config
// (noting those it cannot) and returns its top-level mapping.
func (b *kubeadmBoot) readCloudConfig(userData []byte, meta map[string]any) (map[string]any, error) {
	text, ok := cloudConfigBody(userData)
	if !ok {
		return nil, errNotCloudConfig
	}
	text, missing := renderMetaData(text, meta)
	for _, k := range missing {
		b.notes = append(b.notes, fmt.Sprintf("the user-data refers to meta-data %s, which the meta-data lacks or is not a scalar", quoteShort(k)))
	}
	var top any
	if err := yaml.Unmarshal([]byte(text), &top); err != nil {
		return nil, decodeError("the cloud-config", err)
	}
	if top == nil {
		return nil, errNoKubeadm
	}
	doc, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the cloud-config is not a mapping", errUserData)
	}
	return doc, nil
}

// readKubeadmConfigs returns the kubeadm command runcmd runs ("init",
// "join" or "") and the configurations write_files gives it: at the paths
// its --config names, then at CABPK's.
func readKubeadmConfigs(files map[string]*writeFile, runcmd any) (string, kubeadmConfigs, error) {
	var cfg kubeadmConfigs
	mode, configPaths, err := kubeadmCommands(runcmd)
	if err != nil {
		return "", cfg, err
	}
	for _, p := range []string{kubeadmInitConfigPath, kubeadmJoinConfigPath} {
		if !slices.Contains(configPaths, p) {
			configPaths = append(configPaths, p)
		}
	}
	for _, p := range configPaths {
		f, ok := files[p]
		if !ok {
			continue
		}
		content, err := f.decode()
		if err != nil {
			return "", cfg, err
		}
		if err := cfg.add(f.index, content); err != nil {
			return "", cfg, err
		}
	}
	return mode, cfg, nil
}

// joins decides between kubeadm join and init: the command run, when its
// configuration is there, else whichever configuration is.
func joins(mode string, cfg kubeadmConfigs) (bool, error) {
	switch {
	case mode == "init" && (cfg.init != nil || cfg.cluster != nil):
		return false, nil
	case mode == "join" && cfg.join != nil:
		return true, nil
	case cfg.init != nil || cfg.cluster != nil:
		return false, nil
	case cfg.join != nil:
		return true, nil
	}
	return false, errNoKubeadm
}

// readCA takes the cluster CA from the files, in the certificates
// directory of the cluster configuration, noting a certificate without
// its key.
func (b *kubeadmBoot) readCA(files map[string]*writeFile, cfg kubeadmConfigs) error {
	certDir := defaultCertificatesDir
	if cfg.cluster != nil && cfg.cluster.CertificatesDir != "" {
		certDir = cfg.cluster.CertificatesDir
	}
	var err error
	if b.ca, err = clusterCA(files, certDir); err != nil {
		return err
	}
	if b.ca == nil {
		if _, ok := files[path.Join(certDir, "ca.crt")]; ok {
			b.notes = append(b.notes, fmt.Sprintf("the user-data writes %s but not its key: no credentials from it", path.Join(certDir, "ca.crt")))
		}
	}
	return nil
}

// joinEndpoint reads the API server kubeadm join discovers the cluster
// at: discovery.bootstrapToken.apiServerEndpoint.
func (b *kubeadmBoot) joinEndpoint(d *discovery) error {
	switch {
	case d != nil && d.BootstrapToken != nil:
		b.token = d.BootstrapToken.Token != ""
		if d.BootstrapToken.APIServerEndpoint == "" {
			b.notes = append(b.notes, "JoinConfiguration discovery.bootstrapToken has no apiServerEndpoint")
			return nil
		}
		var err error
		if b.endpoint, err = apiEndpointURL(d.BootstrapToken.APIServerEndpoint, defaultAPIServerPort); err != nil {
			return fmt.Errorf("%w: JoinConfiguration discovery.bootstrapToken.apiServerEndpoint: %w", errUserData, err)
		}
	case d != nil && d.File != nil:
		b.notes = append(b.notes, "JoinConfiguration discovery.file is not read by the emulator; only discovery.bootstrapToken names the cluster")
	default:
		b.notes = append(b.notes, "JoinConfiguration has no discovery")
	}
	return nil
}

// initEndpoint reads the API server of a kubeadm init: the
// ClusterConfiguration's controlPlaneEndpoint, else the
// InitConfiguration's localAPIEndpoint; the port, when the endpoint has
// none, is localAPIEndpoint.bindPort, else 6443.
func (b *kubeadmBoot) initEndpoint(cfg kubeadmConfigs) error {
	port := defaultAPIServerPort
	var local *apiEndpoint
	if cfg.init != nil {
		local = cfg.init.LocalAPIEndpoint
	}
	if local != nil && local.BindPort > 0 {
		port = int(local.BindPort)
	}
	var err error
	switch {
	case cfg.cluster != nil && cfg.cluster.ControlPlaneEndpoint != "":
		if b.endpoint, err = apiEndpointURL(cfg.cluster.ControlPlaneEndpoint, port); err != nil {
			return fmt.Errorf("%w: ClusterConfiguration controlPlaneEndpoint: %w", errUserData, err)
		}
	case local != nil && local.AdvertiseAddress != "":
		if b.endpoint, err = apiEndpointURL(local.AdvertiseAddress, port); err != nil {
			return fmt.Errorf("%w: InitConfiguration localAPIEndpoint: %w", errUserData, err)
		}
	default:
		b.notes = append(b.notes, "neither ClusterConfiguration controlPlaneEndpoint nor InitConfiguration localAPIEndpoint names the API server")
	}
	return nil
}

// cloudConfigBody returns the user-data if it is a #cloud-config
// document, optionally after CABPK's "## template: jinja" line.
func cloudConfigBody(data []byte) (string, bool) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	first, rest, _ := strings.Cut(text, "\n")
	if isJinjaHeader(first) {
		first, _, _ = strings.Cut(rest, "\n")
	}
	return text, strings.HasPrefix(strings.TrimRight(first, "\r \t"), "#cloud-config")
}

func isJinjaHeader(line string) bool {
	f := strings.Fields(strings.ToLower(line))
	return len(f) == 3 && f[0] == "##" && f[1] == "template:" && f[2] == "jinja"
}

// jinjaMetaData matches cloud-init's Jinja references to the meta-data:
// {{ ds.meta_data.key }}, with or without spaces, or ds.meta_data['key'].
var jinjaMetaData = regexp.MustCompile(`\{\{-?\s*ds\.meta_data(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*(?:'([^'{}]*)'|"([^"{}]*)")\s*\])\s*-?\}\}`)

// renderMetaData substitutes the meta-data references in s, as cloud-init
// renders a "## template: jinja" user-data (here whether or not it has the
// header). A key with hyphens is also found under its name with
// underscores, as cloud-init offers it. References to missing or
// non-scalar values stay as they are and are returned.
func renderMetaData(s string, meta map[string]any) (string, []string) {
	var missing []string
	out := jinjaMetaData.ReplaceAllStringFunc(s, func(ref string) string {
		m := jinjaMetaData.FindStringSubmatch(ref)
		key := m[1] + m[2] + m[3]
		v, ok := metaValue(meta, key)
		if !ok {
			if !slices.Contains(missing, key) {
				missing = append(missing, key)
			}
			return ref
		}
		return v
	})
	return out, missing
}

// metaValue is a scalar meta-data value as text.
func metaValue(meta map[string]any, key string) (string, bool) {
	v, ok := meta[key]
	if !ok {
		for _, k := range sortedKeys(meta) {
			if strings.ReplaceAll(k, "-", "_") == key {
				v, ok = meta[k], true
				break
			}
		}
	}
	if !ok {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}

// writeFile is one entry of write_files.
type writeFile struct {
	index         int
	path, content string
	encoding      string
	appended      []writeFile
}

// writeFiles reads write_files, by path; an entry with append: true adds
// to the one before it of the same path.
func writeFiles(raw any) (map[string]*writeFile, error) {
	out := map[string]*writeFile{}
	if raw == nil {
		return out, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: write_files is not a list", errUserData)
	}
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: write_files[%d] is not a mapping", errUserData, i)
		}
		str := func(key string) (string, error) {
			switch v := m[key].(type) {
			case nil:
				return "", nil
			case string:
				return v, nil
			default:
				return "", fmt.Errorf("%w: write_files[%d].%s is not a string", errUserData, i, key)
			}
		}
		f := writeFile{index: i}
		var err error
		if f.path, err = str("path"); err != nil {
			return nil, err
		}
		if f.path == "" {
			return nil, fmt.Errorf("%w: write_files[%d] has no path", errUserData, i)
		}
		if f.content, err = str("content"); err != nil {
			return nil, err
		}
		if f.encoding, err = str("encoding"); err != nil {
			return nil, err
		}
		appendTo := false
		switch v := m["append"].(type) {
		case nil:
		case bool:
			appendTo = v
		default:
			return nil, fmt.Errorf("%w: write_files[%d].append is not a boolean", errUserData, i)
		}
		p := path.Clean(f.path)
		if prev, ok := out[p]; ok && appendTo {
			prev.appended = append(prev.appended, f)
			continue
		}
		out[p] = &f
	}
	return out, nil
}

// decode returns a file's contents as cloud-init writes them: each entry
// decoded (base64, gzip or both), appended entries after the first.
func (f *writeFile) decode() ([]byte, error) {
	out, err := decodeContent(f.index, f.content, f.encoding)
	if err != nil {
		return nil, err
	}
	for _, a := range f.appended {
		more, err := decodeContent(a.index, a.content, a.encoding)
		if err != nil {
			return nil, err
		}
		if len(out)+len(more) > maxFileBytes {
			return nil, fmt.Errorf("%w: write_files[%d] with what is appended to it is larger than %d bytes", errUserData, f.index, maxFileBytes)
		}
		out = append(out, more...)
	}
	return out, nil
}

// decodeContent decodes one write_files entry. Encodings as cloud-init
// names them: b64 or base64; gz or gzip; gz+b64, gz+base64, gzip+b64 or
// gzip+base64 (base64 of gzip). Any other is plain text, as in cloud-init.
// Errors name the entry by its index: a path may be anything.
func decodeContent(index int, content, encoding string) ([]byte, error) {
	var b64, gz bool
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "b64", "base64":
		b64 = true
	case "gz", "gzip":
		gz = true
	case "gz+b64", "gz+base64", "gzip+b64", "gzip+base64":
		b64, gz = true, true
	}
	data := []byte(content)
	if b64 {
		clean := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
				return -1
			}
			return r
		}, content)
		var err error
		if data, err = base64.StdEncoding.DecodeString(clean); err != nil {
			if data, err = base64.RawStdEncoding.DecodeString(clean); err != nil {
				return nil, fmt.Errorf("%w: write_files[%d]: the content is not base64", errUserData, index)
			}
		}
	}
	if gz {
		r, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: write_files[%d]: the content is not gzip", errUserData, index)
		}
		data, err = io.ReadAll(io.LimitReader(r, maxFileBytes+1))
		if err != nil {
			return nil, fmt.Errorf("%w: write_files[%d]: the gzip content is corrupt", errUserData, index)
		}
		if len(data) > maxFileBytes {
			return nil, fmt.Errorf("%w: write_files[%d] decompresses to more than %d bytes", errUserData, index, maxFileBytes)
		}
	}
	return data, nil
}

// kubeadmCommands reads runcmd for kubeadm: the first command's verb
// (init or join) and every --config it is given. Entries are shell
// strings or argument lists.
func kubeadmCommands(raw any) (mode string, configs []string, err error) {
	if raw == nil {
		return "", nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return "", nil, fmt.Errorf("%w: runcmd is not a list", errUserData)
	}
	for i, item := range list {
		var words []string
		switch v := item.(type) {
		case string:
			words = strings.Fields(v)
		case []any:
			for _, w := range v {
				s, ok := w.(string)
				if !ok {
					return "", nil, fmt.Errorf("%w: runcmd[%d] is a list holding other than strings", errUserData, i)
				}
				words = append(words, s)
			}
		default:
			return "", nil, fmt.Errorf("%w: runcmd[%d] is neither a string nor a list", errUserData, i)
		}
		for j := 0; j < len(words); j++ {
			if path.Base(strings.Trim(words[j], `'"`)) != "kubeadm" {
				continue
			}
			verb := ""
			for k := j + 1; k < len(words); k++ {
				w := strings.Trim(words[k], `'"`)
				if w == "&&" || w == "||" || w == ";" || w == "|" {
					break
				}
				switch {
				case w == "--config" && k+1 < len(words):
					configs = append(configs, path.Clean(strings.Trim(words[k+1], `'"`)))
					k++
				case strings.HasPrefix(w, "--config="):
					configs = append(configs, path.Clean(strings.TrimPrefix(w, "--config=")))
				case verb == "" && !strings.HasPrefix(w, "-"):
					verb = w
				}
			}
			if mode == "" && (verb == "init" || verb == "join") {
				mode = verb
			}
		}
	}
	return mode, configs, nil
}

// kubeadm's configuration kinds, with only the fields the emulator reads.
// The v1beta3 and v1beta4 forms differ, for these fields, only in
// kubeletExtraArgs (a map; a list of name and value).
type kubeadmDoc struct {
	APIVersion           string            `json:"apiVersion"`
	Kind                 string            `json:"kind"`
	ControlPlaneEndpoint string            `json:"controlPlaneEndpoint"`
	CertificatesDir      string            `json:"certificatesDir"`
	LocalAPIEndpoint     *apiEndpoint      `json:"localAPIEndpoint"`
	NodeRegistration     *nodeRegistration `json:"nodeRegistration"`
	Discovery            *discovery        `json:"discovery"`
	// raw is the document as the user-data gives it (meta-data
	// substituted).
	raw []byte
}

type apiEndpoint struct {
	AdvertiseAddress string `json:"advertiseAddress"`
	BindPort         int32  `json:"bindPort"`
}

type nodeRegistration struct {
	Name             string          `json:"name"`
	KubeletExtraArgs json.RawMessage `json:"kubeletExtraArgs"`
}

type discovery struct {
	BootstrapToken *struct {
		Token             string `json:"token"`
		APIServerEndpoint string `json:"apiServerEndpoint"`
	} `json:"bootstrapToken"`
	File *struct {
		KubeConfigPath string `json:"kubeConfigPath"`
	} `json:"file"`
}

// kubeadmConfigs are the kubeadm documents of the configuration files.
type kubeadmConfigs struct {
	cluster, init, join *kubeadmDoc
}

// add reads one multi-document configuration file, write_files[index];
// documents of other API groups (KubeletConfiguration,
// KubeProxyConfiguration) are skipped.
func (c *kubeadmConfigs) add(index int, content []byte) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(content)))
	for n := 1; ; n++ {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: write_files[%d] document %d cannot be read", errUserData, index, n)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var tm struct {
			APIVersion any `json:"apiVersion"`
			Kind       any `json:"kind"`
		}
		if err := yaml.Unmarshal(raw, &tm); err != nil {
			return decodeError(fmt.Sprintf("write_files[%d] document %d", index, n), err)
		}
		av, _ := tm.APIVersion.(string)
		kind, _ := tm.Kind.(string)
		if group, _, _ := strings.Cut(av, "/"); group != kubeadmGroup {
			continue
		}
		var dst **kubeadmDoc
		switch kind {
		case "ClusterConfiguration":
			dst = &c.cluster
		case "InitConfiguration":
			dst = &c.init
		case "JoinConfiguration":
			dst = &c.join
		default:
			continue
		}
		doc := &kubeadmDoc{}
		if err := yaml.Unmarshal(raw, doc); err != nil {
			return decodeError(fmt.Sprintf("write_files[%d] document %d (%s)", index, n, kind), err)
		}
		doc.raw = raw
		if *dst == nil {
			*dst = doc
		}
	}
}

// decodeError says where a YAML or JSON document failed to decode without
// the decoder's message, which may quote the offending text.
func decodeError(what string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the document"
		}
		return fmt.Errorf("%w: %s: %s must be %s", errUserData, what, field, article(te.Type.Kind().String()))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%w: %s is not valid (syntax error at byte %d)", errUserData, what, se.Offset)
	}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%w: %s is not valid YAML (line %s)", errUserData, what, m[1])
	}
	return fmt.Errorf("%w: %s is not valid YAML", errUserData, what)
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func article(kind string) string {
	switch kind {
	case "struct", "map":
		return "a mapping"
	case "slice", "array":
		return "a list"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
		return "a number"
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}

// apiEndpointURL turns host[:port] (or an https URL) into the API
// server's URL, with port when none is given.
func apiEndpointURL(endpoint string, port int) (string, error) {
	endpoint = strings.TrimSpace(endpoint)
	if strings.Contains(endpoint, "://") {
		u, err := url.Parse(endpoint)
		if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return "", errors.New("not host:port nor an https URL without a path")
		}
		endpoint = u.Host
	}
	host, p, err := net.SplitHostPort(endpoint)
	if err != nil {
		host, p = strings.Trim(endpoint, "[]"), strconv.Itoa(port)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", errors.New("the port is not a number from 1 to 65535")
	}
	if ip := net.ParseIP(host); ip == nil && len(validation.IsDNS1123Subdomain(strings.ToLower(host))) > 0 {
		return "", errors.New("the host is neither an IP address nor a DNS name")
	}
	return "https://" + net.JoinHostPort(strings.ToLower(host), strconv.Itoa(n)), nil
}

// clusterCA reads <certDir>/ca.crt and ca.key when the user-data writes
// both: the cluster CA, which CABPK gives control-plane hosts.
func clusterCA(files map[string]*writeFile, certDir string) (*pki.KeyPair, error) {
	crtPath, keyPath := path.Join(certDir, "ca.crt"), path.Join(certDir, "ca.key")
	crtFile, ok1 := files[crtPath]
	keyFile, ok2 := files[keyPath]
	if !ok1 || !ok2 {
		return nil, nil
	}
	crt, err := crtFile.decode()
	if err != nil {
		return nil, err
	}
	key, err := keyFile.decode()
	if err != nil {
		return nil, err
	}
	// pki.Parse names the block type or the certificate's subject,
	// never key material.
	ca, err := pki.Parse(crt, key)
	if err != nil {
		return nil, fmt.Errorf("%w: the cluster CA in %s and %s: %w", errUserData, crtPath, keyPath, err)
	}
	if !ca.Cert.IsCA {
		return nil, fmt.Errorf("%w: %s is not a CA certificate", errUserData, crtPath)
	}
	return ca, nil
}

// readNodeRegistration takes the Node's name and the kubelet's
// node-labels, provider-id, node-ip and hostname-override from
// nodeRegistration.
func (b *kubeadmBoot) readNodeRegistration(reg *nodeRegistration) error {
	args, err := kubeletArgs(reg.KubeletExtraArgs)
	if err != nil {
		return err
	}
	name := reg.Name
	if v, ok := args["hostname-override"]; ok {
		name = v // the kubelet's flag wins over what kubeadm passes
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if name != "" {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			b.notes = append(b.notes, fmt.Sprintf("nodeRegistration.name is not a Node name (%s)", strings.Join(msgs, "; ")))
		} else {
			b.nodeName = name
		}
	}
	b.providerID = strings.TrimSpace(args["provider-id"])
	for ip := range strings.SplitSeq(args["node-ip"], ",") {
		if ip = strings.TrimSpace(ip); ip == "" {
			continue
		}
		if net.ParseIP(ip) == nil {
			b.notes = append(b.notes, "kubelet node-ip holds an entry that is not an IP address")
			continue
		}
		b.nodeIP = ip
		break
	}
	if raw, ok := args["node-labels"]; ok {
		b.labels = map[string]string{}
		for i, pair := range strings.Split(raw, ",") {
			if pair = strings.TrimSpace(pair); pair == "" {
				continue
			}
			k, v, ok := strings.Cut(pair, "=")
			if !ok || len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
				b.notes = append(b.notes, fmt.Sprintf("kubelet node-labels entry %d ignored: not key=value of a valid label", i+1))
				continue
			}
			b.labels[k] = v
		}
	}
	return nil
}

// kubeletArgs reads nodeRegistration.kubeletExtraArgs: a map in kubeadm
// v1beta3, a list of name and value in v1beta4 (where a name may repeat;
// the last wins, as the kubelet parses its flags).
func kubeletArgs(raw json.RawMessage) (map[string]string, error) {
	out := map[string]string{}
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err == nil {
		for k, v := range m {
			s, ok := scalar(v)
			if !ok {
				return nil, fmt.Errorf("%w: nodeRegistration.kubeletExtraArgs: a value is not a scalar", errUserData)
			}
			out[k] = s
		}
		return out, nil
	}
	var list []map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%w: nodeRegistration.kubeletExtraArgs is neither a mapping (kubeadm v1beta3) nor a list of name and value (v1beta4)", errUserData)
	}
	for i, a := range list {
		name, ok := a["name"].(string)
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: nodeRegistration.kubeletExtraArgs[%d] has no name", errUserData, i)
		}
		v, ok := scalar(a["value"])
		if !ok {
			return nil, fmt.Errorf("%w: nodeRegistration.kubeletExtraArgs[%d] has a value that is not a scalar", errUserData, i)
		}
		out[name] = v
	}
	return out, nil
}

func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}
