package store

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// Every value but the schema version ends in a checksum of its key and
// itself (since version 6): a newline and the CRC-32C (Castagnoli) of key,
// a zero byte and the value, in eight hex digits. bbolt checks only its
// header pages, so a damaged page of records would otherwise be read as
// other records: a sample of another value, a run of another commit.
// The trailer keeps values readable with `bbolt get`; covering the key
// catches a damaged key too, and an index entry, whose value is empty, is
// its trailer alone.

// sealLen is the length of the trailer.
const sealLen = 1 + 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrDamagedRecord reports a stored value (or its key) whose checksum does
// not match: that part of the file was overwritten. It is ErrDamaged too.
var ErrDamagedRecord = errors.New("store record is damaged")

// damagedRecordError names the record.
type damagedRecordError struct{ key []byte }

func (e *damagedRecordError) Error() string {
	return fmt.Sprintf("store record %s is damaged (its checksum does not match: that part of the file was overwritten); "+
		"restore the store from a backup", printableKey(e.key))
}

func (e *damagedRecordError) Is(target error) bool {
	return target == ErrDamagedRecord || target == ErrDamaged
}

func printableKey(k []byte) string {
	if utf8.Valid(k) && strconv.IsPrint(rune(firstRune(k))) {
		return strconv.Quote(string(k))
	}
	return hex.EncodeToString(k)
}

func firstRune(k []byte) rune {
	r, _ := utf8.DecodeRune(k)
	return r
}

func checksum(key, value []byte) uint32 {
	h := crc32.Update(0, castagnoli, key)
	h = crc32.Update(h, castagnoli, []byte{0})
	return crc32.Update(h, castagnoli, value)
}

// seal returns value with its trailer.
func seal(key, value []byte) []byte {
	out := make([]byte, 0, len(value)+sealLen)
	out = append(out, value...)
	out = append(out, '\n')
	return hex.AppendEncode(out, crc32BE(checksum(key, value)))
}

func crc32BE(c uint32) []byte { return []byte{byte(c >> 24), byte(c >> 16), byte(c >> 8), byte(c)} }

// unseal returns the value of a sealed raw under key, or a
// damagedRecordError when the trailer does not match. The value shares
// raw's memory: decode it before the transaction ends.
func unseal(key, raw []byte) ([]byte, error) {
	if len(raw) < sealLen || raw[len(raw)-sealLen] != '\n' {
		return nil, &damagedRecordError{key: key}
	}
	value, trailer := raw[:len(raw)-sealLen], raw[len(raw)-sealLen+1:]
	var sum [4]byte
	if _, err := hex.Decode(sum[:], trailer); err != nil || string(sum[:]) != string(crc32BE(checksum(key, value))) {
		return nil, &damagedRecordError{key: key}
	}
	return value, nil
}

// decodeJSON unseals raw under key and decodes it into v.
func decodeJSON(key, raw []byte, v any) error {
	value, err := unseal(key, raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(value, v); err != nil {
		return fmt.Errorf("decode %s: %w", printableKey(key), err)
	}
	return nil
}

// putSealed stores value under key with its trailer.
func putSealed(b *bolt.Bucket, key, value []byte) error {
	return b.Put(key, seal(key, value))
}

// getSealed returns the value under key, nil when absent.
func getSealed(b *bolt.Bucket, key []byte) ([]byte, error) {
	raw := b.Get(key)
	if raw == nil {
		return nil, nil
	}
	return unseal(key, raw)
}

// migrateV6 seals every value of every bucket but meta, nested buckets
// (samples/<metric>, traces/<job>) included.
func migrateV6(tx *bolt.Tx) error {
	return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		if string(name) == string(bucketMeta) {
			return nil
		}
		return sealBucket(b)
	})
}

func sealBucket(b *bolt.Bucket) error {
	type kv struct{ k, v []byte }
	var values []kv
	var nested [][]byte
	err := b.ForEach(func(k, v []byte) error {
		if v == nil && b.Bucket(k) != nil {
			nested = append(nested, append([]byte(nil), k...))
			return nil
		}
		if _, err := unseal(k, v); err == nil {
			return nil // sealed already: the migration may meet a value written since
		}
		values = append(values, kv{append([]byte(nil), k...), seal(k, v)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range values {
		if err := b.Put(e.k, e.v); err != nil {
			return fmt.Errorf("seal %s: %w", printableKey(e.k), err)
		}
	}
	for _, k := range nested {
		if err := sealBucket(b.Bucket(k)); err != nil {
			return err
		}
	}
	return nil
}
