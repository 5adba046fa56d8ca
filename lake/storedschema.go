package lake

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"

	pqmeta "github.com/apache/arrow-go/v18/parquet/metadata"
)

// arrowSchemaKey is the Parquet key-value metadata key under which Arrow
// writers store the Arrow schema (pqarrow.WithStoreSchema), base64 of an
// Arrow IPC schema message.
const arrowSchemaKey = "ARROW:schema"

// checkStoredSchema bounds the stored Arrow schema before pqarrow decodes
// it. arrow-go's IPC reader trusts the message's lengths: it allocates
// the body length a damaged message declares (32 GiB for one flipped
// byte) and makes slices as long as a vector's declared length before
// reading an element. So the message's framing and every table, vector
// and string the schema decoder visits are checked to lie within the
// decoded bytes. A file without a stored schema passes; pqarrow then
// derives the Arrow schema from the Parquet one.
func checkStoredSchema(kv pqmeta.KeyValueMetadata) (err error) {
	v := kv.FindValue(arrowSchemaKey)
	if v == nil {
		return nil
	}
	// Decoded as pqarrow decodes it: padded when the length allows,
	// unpadded otherwise.
	var b []byte
	if len(*v)%4 == 0 {
		b, err = base64.StdEncoding.DecodeString(*v)
	}
	if len(b) == 0 || err != nil {
		b, err = base64.RawStdEncoding.DecodeString(*v)
	}
	if err != nil {
		return fmt.Errorf("stored Arrow schema is not base64: %v", err)
	}
	if err := checkSchemaMessage(b); err != nil {
		return fmt.Errorf("stored Arrow schema: %w", err)
	}
	return nil
}

// checkSchemaMessage checks an encapsulated IPC message (continuation
// marker or, from before Arrow 0.15, none; metadata length; flatbuffer
// Message; body) holding a Schema.
func checkSchemaMessage(b []byte) error {
	at := 0
	if len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0xffffffff {
		at = 4
	}
	if len(b) < at+4 {
		return errors.New("no message length")
	}
	n := int64(int32(binary.LittleEndian.Uint32(b[at:])))
	at += 4
	if n < 4 || n > int64(len(b)-at) {
		return fmt.Errorf("message length %d, %d bytes follow", n, len(b)-at)
	}
	meta, rest := b[at:at+int(n)], len(b)-at-int(n)
	fb := &flatbuffer{b: meta, maxTables: len(meta) / 4}
	msg, err := fb.root()
	if err != nil {
		return err
	}
	const (
		msgHeaderType = 1
		msgHeader     = 2
		msgBodyLength = 3
		msgMetadata   = 4
		headerSchema  = 1
	)
	kind, err := fb.scalar(msg, msgHeaderType, 1)
	if err != nil {
		return err
	}
	if kind != headerSchema {
		return fmt.Errorf("message of kind %d, not a schema", kind)
	}
	body, err := fb.scalar(msg, msgBodyLength, 8)
	if err != nil {
		return err
	}
	if body > uint64(rest) {
		return fmt.Errorf("message body length %d, %d bytes follow", int64(body), rest)
	}
	if err := fb.tables(msg, msgMetadata, fb.keyValue); err != nil {
		return err
	}
	schema, ok, err := fb.table(msg, msgHeader)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("schema message without a schema")
	}
	const (
		schemaFields   = 1
		schemaMetadata = 2
		schemaFeatures = 3
	)
	if err := fb.tables(schema, schemaFields, fb.field); err != nil {
		return err
	}
	if err := fb.tables(schema, schemaMetadata, fb.keyValue); err != nil {
		return err
	}
	_, err = fb.vector(schema, schemaFeatures, 8)
	return err
}

// flatbuffer checks the parts of a flatbuffer that arrow-go's schema
// decoder reads. Scalars out of range make that decoder panic, which the
// lake recovers from; lengths out of range make it allocate, which is
// what is checked here. Tables are only ever referenced forward, so a
// walk ends, but a damaged buffer can reference one table from several
// places and make the decoder's work exponential: maxTables bounds the
// tables visited by how many fit.
type flatbuffer struct {
	b         []byte
	visited   int
	maxTables int
}

// fbTable is a table's position and its vtable's.
type fbTable struct{ pos, vt, vtLen, tabLen int }

func (fb *flatbuffer) u32(at int) (int, error) {
	if at < 0 || at > len(fb.b)-4 {
		return 0, fmt.Errorf("offset %d out of the schema's %d bytes", at, len(fb.b))
	}
	return int(binary.LittleEndian.Uint32(fb.b[at:])), nil
}

func (fb *flatbuffer) u16(at int) int { return int(binary.LittleEndian.Uint16(fb.b[at:])) }

func (fb *flatbuffer) root() (fbTable, error) {
	p, err := fb.u32(0)
	if err != nil {
		return fbTable{}, err
	}
	return fb.tableAt(p)
}

func (fb *flatbuffer) tableAt(p int) (fbTable, error) {
	fb.visited++
	if fb.visited > fb.maxTables {
		return fbTable{}, fmt.Errorf("more tables than %d bytes hold", len(fb.b))
	}
	so, err := fb.u32(p)
	if err != nil {
		return fbTable{}, err
	}
	vt := p - int(int32(uint32(so)))
	if vt < 0 || vt > len(fb.b)-4 {
		return fbTable{}, fmt.Errorf("vtable at %d out of the schema's %d bytes", vt, len(fb.b))
	}
	t := fbTable{pos: p, vt: vt, vtLen: fb.u16(vt), tabLen: fb.u16(vt + 2)}
	if t.vtLen < 4 || vt+t.vtLen > len(fb.b) || t.tabLen < 4 || p+t.tabLen > len(fb.b) {
		return fbTable{}, fmt.Errorf("table at %d out of the schema's %d bytes", p, len(fb.b))
	}
	return t, nil
}

// fieldAt is where field slot of t lies; 0 when absent.
func (fb *flatbuffer) fieldAt(t fbTable, slot int) int {
	// Present as flatbuffers reads it: the slot starts inside the
	// vtable, even when an odd damaged length cuts it in half.
	voff := 4 + 2*slot
	if voff >= t.vtLen || t.vt+voff+2 > len(fb.b) {
		return 0
	}
	if off := fb.u16(t.vt + voff); off != 0 {
		return t.pos + off
	}
	return 0
}

// scalar reads an unsigned little-endian scalar of size bytes; 0 when
// absent, as flatbuffers defaults it.
func (fb *flatbuffer) scalar(t fbTable, slot, size int) (uint64, error) {
	at := fb.fieldAt(t, slot)
	if at == 0 {
		return 0, nil
	}
	if at > len(fb.b)-size {
		return 0, fmt.Errorf("field at %d out of the schema's %d bytes", at, len(fb.b))
	}
	var v [8]byte
	copy(v[:], fb.b[at:at+size])
	return binary.LittleEndian.Uint64(v[:]), nil
}

// ref follows an offset field to what it references.
func (fb *flatbuffer) ref(t fbTable, slot int) (at int, ok bool, err error) {
	q := fb.fieldAt(t, slot)
	if q == 0 {
		return 0, false, nil
	}
	u, err := fb.u32(q)
	if err != nil {
		return 0, false, err
	}
	return q + u, true, nil
}

func (fb *flatbuffer) table(t fbTable, slot int) (fbTable, bool, error) {
	at, ok, err := fb.ref(t, slot)
	if err != nil || !ok {
		return fbTable{}, false, err
	}
	sub, err := fb.tableAt(at)
	return sub, err == nil, err
}

// vector checks that a vector (or string, elem 1) fits and returns its
// length.
func (fb *flatbuffer) vector(t fbTable, slot, elem int) (int, error) {
	at, ok, err := fb.ref(t, slot)
	if err != nil || !ok {
		return 0, err
	}
	n, err := fb.u32(at)
	if err != nil {
		return 0, err
	}
	if int64(n)*int64(elem) > int64(len(fb.b)-at-4) {
		return 0, fmt.Errorf("vector of %d at %d out of the schema's %d bytes", n, at, len(fb.b))
	}
	return n, nil
}

// tables checks a vector of tables and each of them with check.
func (fb *flatbuffer) tables(t fbTable, slot int, check func(fbTable) error) error {
	n, err := fb.vector(t, slot, 4)
	if err != nil || n == 0 {
		return err
	}
	start, _, _ := fb.ref(t, slot)
	for i := range n {
		e := start + 4 + 4*i
		u, err := fb.u32(e)
		if err != nil {
			return err
		}
		sub, err := fb.tableAt(e + u)
		if err != nil {
			return err
		}
		if err := check(sub); err != nil {
			return err
		}
	}
	return nil
}

func (fb *flatbuffer) keyValue(t fbTable) error {
	const key, value = 0, 1
	if _, err := fb.vector(t, key, 1); err != nil {
		return err
	}
	_, err := fb.vector(t, value, 1)
	return err
}

// field checks a Field: its name, type, dictionary encoding, children and
// metadata.
func (fb *flatbuffer) field(t fbTable) error {
	const (
		fieldName       = 0
		fieldTypeType   = 2
		fieldType       = 3
		fieldDictionary = 4
		fieldChildren   = 5
		fieldMetadata   = 6
		// The only type tables with more than scalars: Timestamp's
		// time zone and Union's type ids, both in slot 1.
		typeTimestamp = 10
		typeUnion     = 14
		dictIndexType = 1
	)
	if _, err := fb.vector(t, fieldName, 1); err != nil {
		return err
	}
	kind, err := fb.scalar(t, fieldTypeType, 1)
	if err != nil {
		return err
	}
	typ, ok, err := fb.table(t, fieldType)
	if err != nil {
		return err
	}
	if ok {
		switch kind {
		case typeTimestamp:
			_, err = fb.vector(typ, 1, 1)
		case typeUnion:
			_, err = fb.vector(typ, 1, 4)
		}
		if err != nil {
			return err
		}
	}
	dict, ok, err := fb.table(t, fieldDictionary)
	if err != nil {
		return err
	}
	if ok {
		if _, _, err := fb.table(dict, dictIndexType); err != nil {
			return err
		}
	}
	if err := fb.tables(t, fieldChildren, fb.field); err != nil {
		return err
	}
	return fb.tables(t, fieldMetadata, fb.keyValue)
}
