package localironic

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/airshipit/airship-go/internal/fileutil"
)

// Credentials are the HTTP basic credentials of an http_basic Ironic.
type Credentials struct {
	Username string
	Password string
}

// ReadCredentials reads a credentials file Up wrote: two YAML lines,
// `username: U` and `password: P`.
func ReadCredentials(path string) (Credentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Credentials{}, fmt.Errorf("reading Ironic credentials: %w", err)
	}
	var c Credentials
	for _, line := range strings.Split(string(data), "\n") {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "username":
			c.Username = strings.TrimSpace(value)
		case "password":
			c.Password = strings.TrimSpace(value)
		}
	}
	if c.Username == "" || c.Password == "" {
		return Credentials{}, fmt.Errorf("credentials file %s of Ironic: username and password are required", path)
	}
	return c, nil
}

// ensureCredentials keeps the credentials and htpasswd files of an earlier
// Up (clients may hold them) or writes new ones: a generated user and
// password, the password's bcrypt hash for Ironic. Both files are 0600.
func ensureCredentials(p paths) error {
	if c, err := ReadCredentials(p.credentials()); err == nil {
		if _, err := os.Stat(p.htpasswd()); err == nil {
			return nil
		}
		return writeHTPasswd(p, c)
	}
	user := make([]byte, 4)
	pass := make([]byte, 32)
	if _, err := rand.Read(user); err != nil {
		return fmt.Errorf("generating the Ironic user: %w", err)
	}
	if _, err := rand.Read(pass); err != nil {
		return fmt.Errorf("generating the Ironic password: %w", err)
	}
	c := Credentials{Username: "airship-" + hex.EncodeToString(user), Password: base64.RawURLEncoding.EncodeToString(pass)}
	if err := writeHTPasswd(p, c); err != nil {
		return err
	}
	data := fmt.Sprintf("username: %s\npassword: %s\n", c.Username, c.Password)
	if err := fileutil.WriteAtomic(p.credentials(), []byte(data), 0o600); err != nil {
		return fmt.Errorf("writing Ironic credentials file: %w", err)
	}
	return nil
}

// writeHTPasswd writes the user's bcrypt entry. The cost is bcrypt's
// minimum: Ironic checks it on every request, and the password is 256
// random bits, beyond any guessing whatever the cost.
func writeHTPasswd(p paths, c Credentials) error {
	if c.Username == "" || strings.ContainsAny(c.Username, ":\n") {
		return errors.New("writing Ironic htpasswd: invalid username")
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(c.Password), bcrypt.MinCost)
	if err != nil {
		return fmt.Errorf("hashing the Ironic password: %w", err)
	}
	if err := fileutil.WriteAtomic(p.htpasswd(), []byte(c.Username+":"+string(hash)+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing Ironic htpasswd: %w", err)
	}
	return nil
}
