// Package auth answers "who is calling and what may they do": it turns a bearer token into a Principal,
// mints and verifies API keys, hashes passwords, and names the permission bits a credential carries.
//
// Secrets never leave this package in a recoverable form: API keys are stored as SHA-256 hashes (they are
// 256-bit random, so a fast hash is the right tool), passwords as Argon2id hashes with their parameters.
package auth
