package store

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/perfbot/perfbot/record"
)

// Reads that answer a client a page at a time: each returns at most limit
// items in its list's order and the cursor of the next page ("" after the
// last), and never holds more than a page (and one item) in memory.

// ErrBadCursor is a cursor no page read here returned.
var ErrBadCursor = errors.New("bad cursor")

// A cursor is the position of a page's last item: a time-ordered key
// (a stamp, or a creation time) and a name that breaks ties. Its text is
// opaque to clients.
func encodeCursor(at []byte, name string) string {
	return base64.RawURLEncoding.EncodeToString(append(slices.Clone(at), name...))
}

func decodeCursor(s string, atLen int) ([]byte, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) < atLen {
		return nil, "", fmt.Errorf("cursor %q: %w", s, ErrBadCursor)
	}
	return raw[:atLen], string(raw[atLen:]), nil
}

// HistoryPage returns the page of History's rows that follows the cursor
// after ("" for the first), of at most q.Limit rows (q.Limit > 0), and the
// cursor of the next page. It seeks to the cursor: a page costs what it
// returns, however deep into the history it is.
func (db *DB) HistoryPage(q HistoryQuery, after string) (rows []HistoryRow, next string, err error) {
	if q.Limit <= 0 {
		return nil, "", fmt.Errorf("history page: limit %d: want at least 1", q.Limit)
	}
	var from *historyPos
	if after != "" {
		at, metric, err := decodeCursor(after, stampLen)
		if err != nil {
			return nil, "", err
		}
		from = &historyPos{stamp: at, metric: metric}
	}
	limit := q.Limit
	q.Limit++ // one more tells whether a next page exists
	err = db.view(func(tx *bolt.Tx) error {
		metrics, err := historyMetrics(tx, q.Metric)
		if err != nil {
			return err
		}
		h := historyWalk{q: q, from: from}
		if q.Commit != "" {
			err = h.byCommit(tx, metrics)
		} else {
			err = h.byTime(tx, metrics)
		}
		rows = h.rows
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("history: %w", err)
	}
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		next = encodeCursor(stamp(last.Time, last.RunID), last.Metric)
	}
	return rows, next, nil
}

// historyPos is a place in History's order: newest stamp first, the
// samples of one stamp in metric order.
type historyPos struct {
	stamp  []byte
	metric string
}

// past reports whether the sample of metric at stamp k comes after p.
func (p *historyPos) past(metric string, k []byte) bool {
	if p == nil {
		return true
	}
	c := bytes.Compare(k, p.stamp)
	return c < 0 || c == 0 && metric > p.metric
}

// seek places c on the newest key of its metric's bucket past p.
func (p *historyPos) seek(c *bolt.Cursor, metric string) (k, v []byte) {
	if p == nil {
		return c.Last()
	}
	k, v = c.Seek(p.stamp)
	switch {
	case k == nil:
		return c.Last()
	case bytes.Equal(k, p.stamp) && metric > p.metric:
		return k, v
	}
	return c.Prev()
}

// JobsPage returns the page of Jobs' list (newest first) that follows the
// cursor after, of at most limit jobs, and the cursor of the next page.
func (db *DB) JobsPage(after string, limit int) (jobs []Job, next string, err error) {
	var p listPage[Job]
	if err := p.init(after, limit); err != nil {
		return nil, "", err
	}
	err = db.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			var j Job
			if err := decodeJSON(k, v, &j); err != nil {
				return fmt.Errorf("list jobs: decode %s: %w", k, err)
			}
			p.offer(j, j.Created, j.ID)
			return nil
		})
	})
	if err != nil {
		return nil, "", err
	}
	jobs, next = p.result(func(j Job) (time.Time, string) { return j.Created, j.ID })
	return jobs, next, nil
}

// FindingsPage returns the page of Findings' list (newest first) that
// follows the cursor after, of at most limit findings, and the cursor of
// the next page.
func (db *DB) FindingsPage(after string, limit int) (fs []record.Finding, next string, err error) {
	var p listPage[record.Finding]
	if err := p.init(after, limit); err != nil {
		return nil, "", err
	}
	err = db.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketFindings).ForEach(func(k, v []byte) error {
			f, err := decodeFinding(k, v)
			if err != nil {
				return fmt.Errorf("list findings: decode %s: %w", k, err)
			}
			p.offer(f, f.Created, f.ID)
			return nil
		})
	})
	if err != nil {
		return nil, "", err
	}
	fs, next = p.result(func(f record.Finding) (time.Time, string) { return f.Created, f.ID })
	return fs, next, nil
}

// listPage keeps, of the items offered in any order, the first limit+1
// past the cursor in the order newest (creation) first, ties by id: a
// bounded selection over a bucket that has no index by time.
type listPage[T any] struct {
	limit int
	from  *listKey
	items []listItem[T]
}

type listKey struct {
	created time.Time
	id      string
}

// before reports whether a comes before b in the list's order.
func (a listKey) before(b listKey) bool {
	if !a.created.Equal(b.created) {
		return a.created.After(b.created)
	}
	return a.id < b.id
}

type listItem[T any] struct {
	key  listKey
	item T
}

func (p *listPage[T]) init(after string, limit int) error {
	if limit <= 0 {
		return fmt.Errorf("list page: limit %d: want at least 1", limit)
	}
	p.limit = limit
	if after != "" {
		at, id, err := decodeCursor(after, 8)
		if err != nil {
			return err
		}
		p.from = &listKey{created: time.Unix(0, int64(binary.BigEndian.Uint64(at))), id: id}
	}
	return nil
}

func (p *listPage[T]) offer(item T, created time.Time, id string) {
	k := listKey{created: created, id: id}
	if p.from != nil && !p.from.before(k) {
		return
	}
	p.items = append(p.items, listItem[T]{key: k, item: item})
	if len(p.items) > 2*(p.limit+1) {
		p.trim()
	}
}

func (p *listPage[T]) trim() {
	slices.SortStableFunc(p.items, func(a, b listItem[T]) int {
		switch {
		case a.key.before(b.key):
			return -1
		case b.key.before(a.key):
			return 1
		}
		return 0
	})
	if len(p.items) > p.limit+1 {
		p.items = p.items[:p.limit+1]
	}
}

func (p *listPage[T]) result(key func(T) (time.Time, string)) ([]T, string) {
	p.trim()
	out := make([]T, 0, min(len(p.items), p.limit))
	for _, it := range p.items[:min(len(p.items), p.limit)] {
		out = append(out, it.item)
	}
	next := ""
	if len(p.items) > p.limit {
		created, id := key(out[len(out)-1])
		at := make([]byte, 8)
		binary.BigEndian.PutUint64(at, uint64(created.UnixNano()))
		next = encodeCursor(at, id)
	}
	return out, next
}
