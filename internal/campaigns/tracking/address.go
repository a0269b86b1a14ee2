package tracking

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
)

// ipHashLabel is the HKDF info of the address-hashing key, apart from every token key.
const ipHashLabel = "outflow/tracking/v1/ip-hash"

// IPHasher turns a client address into the keyed hash tracking events store instead of the address: equal
// addresses hash equal within a deployment (so the burst rule can match a source), but the hash cannot be
// reversed by trying every IPv4 address without the deployment secret.
type IPHasher struct {
	key []byte
}

// NewIPHasher derives the hashing key from the deployment secret (config.SecretKey) with HKDF-SHA256 and
// the info "outflow/tracking/v1/ip-hash". Only the current secret is used: after a rotation the same
// address hashes differently, which only splits a burst that straddles the rotation.
func NewIPHasher(secret []byte) (*IPHasher, error) {
	if len(secret) == 0 {
		return nil, errors.New("tracking: no secret key")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, ipHashLabel, sha256.Size)
	if err != nil {
		return nil, fmt.Errorf("tracking: derive ip hash key: %w", err)
	}
	return &IPHasher{key: key}, nil
}

// Hash is the base64url (unpadded) HMAC-SHA256 of the address's 16-byte form, truncated to 128 bits; an
// IPv4-mapped IPv6 address hashes as its IPv4 address. An invalid address hashes to "".
func (h *IPHasher) Hash(ip netip.Addr) string {
	if !ip.IsValid() {
		return ""
	}
	b := ip.Unmap().As16()
	m := hmac.New(sha256.New, h.key)
	m.Write(b[:])
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// SourceNetwork is the network an address belongs to as tracking events keep it (the contract's "source
// network only"): its /24 for IPv4, its /48 for IPv6, so clicks of one office or one scanner pool match
// without storing the address. An invalid address has no network ("").
func SourceNetwork(ip netip.Addr) string {
	if !ip.IsValid() {
		return ""
	}
	ip = ip.Unmap()
	bits := 48
	if ip.Is4() {
		bits = 24
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return ""
	}
	return p.String()
}
