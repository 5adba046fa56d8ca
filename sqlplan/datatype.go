package sqlplan

import (
	"strconv"
	"strings"

	"github.com/flusslite/fluss/metadata"
)

// maxTypeDepth bounds the nesting of ARRAY, MAP and ROW so that hostile
// input cannot exhaust the stack.
const maxTypeDepth = 32

// typeNames maps the type names of the grammar to their roots. Synonyms
// resolve to the type Fluss stores: VARCHAR is STRING, VARBINARY is BYTES.
var typeNames = map[string]metadata.TypeRoot{
	"BOOLEAN": metadata.Boolean, "BOOL": metadata.Boolean,
	"TINYINT": metadata.TinyInt, "SMALLINT": metadata.SmallInt,
	"INT": metadata.Int, "INTEGER": metadata.Int, "BIGINT": metadata.BigInt,
	"FLOAT": metadata.Float, "DOUBLE": metadata.Double,
	"DECIMAL": metadata.Decimal, "NUMERIC": metadata.Decimal, "DEC": metadata.Decimal,
	"CHAR": metadata.Char, "STRING": metadata.String, "VARCHAR": metadata.String,
	"BINARY": metadata.Binary, "BYTES": metadata.Bytes, "VARBINARY": metadata.Bytes,
	"DATE": metadata.Date, "TIME": metadata.Time, "TIMESTAMP": metadata.Timestamp,
	"TIMESTAMP_LTZ": metadata.TimestampLTZ,
	"ARRAY":         metadata.Array, "MAP": metadata.Map, "ROW": metadata.Row,
	// MySQL's names, as ORMs write them (GORM's and bun's MySQL dialects):
	// the text and blob families are STRING and BYTES, DATETIME is
	// TIMESTAMP, MEDIUMINT is INT and REAL is DOUBLE.
	"TEXT": metadata.String, "TINYTEXT": metadata.String, "MEDIUMTEXT": metadata.String,
	"LONGTEXT": metadata.String, "JSON": metadata.String,
	"BLOB": metadata.Bytes, "TINYBLOB": metadata.Bytes, "MEDIUMBLOB": metadata.Bytes, "LONGBLOB": metadata.Bytes,
	"DATETIME": metadata.Timestamp, "MEDIUMINT": metadata.Int, "REAL": metadata.Double,
}

// unsignedWider maps an integer type declared UNSIGNED (MySQL) to the
// signed type that holds its whole range. BIGINT UNSIGNED has no wider
// integer type; it is read as BIGINT, so a value above 2^63-1 is refused
// when written. GORM declares every uint field, the ids of gorm.Model
// included, as BIGINT UNSIGNED, which refusing would make unusable.
var unsignedWider = map[metadata.TypeRoot]metadata.TypeRoot{
	metadata.TinyInt: metadata.SmallInt, metadata.SmallInt: metadata.Int,
	metadata.Int: metadata.BigInt, metadata.BigInt: metadata.BigInt,
}

func lookupTypeName(name string) (metadata.TypeRoot, bool) {
	r, ok := typeNames[strings.ToUpper(name)]
	return r, ok
}

// ParseDataType parses a data type written in the DDL syntax, such as
// "DECIMAL(10, 2)" or "MAP<STRING, ARRAY<INT>>". It reads back what
// metadata.DataType.String writes.
func ParseDataType(s string) (metadata.DataType, error) {
	toks, err := lexAll(s, false)
	if err != nil {
		return metadata.DataType{}, err
	}
	p := &parser{src: s, toks: toks}
	t, err := p.dataType(0)
	if err != nil {
		return metadata.DataType{}, err
	}
	if p.peek().kind != tokEOF {
		return metadata.DataType{}, p.expected("end of data type")
	}
	return t, nil
}

// dataType reads one type, checks it against Fluss's limits, and reports
// errors at the type's name.
func (p *parser) dataType(depth int) (metadata.DataType, error) {
	start := p.peek()
	if depth > maxTypeDepth {
		return metadata.DataType{}, p.errAt(start, "data types are nested too deeply")
	}
	if start.kind != tokIdent {
		return metadata.DataType{}, p.expected("a data type")
	}
	root, ok := lookupTypeName(start.text)
	if !ok {
		return metadata.DataType{}, &PosError{Pos: start.pos,
			Err: errorf(metadata.ErrInvalidType, "unknown data type %q", start.text)}
	}
	p.i++
	name := strings.ToUpper(start.text)
	var t metadata.DataType
	switch root {
	case metadata.TinyInt, metadata.SmallInt, metadata.Int, metadata.BigInt:
		// MySQL's display width (INT(11)) changes nothing but TINYINT(1),
		// MySQL's way of writing a boolean.
		args, n, err := p.optLength(1)
		if err != nil {
			return t, err
		}
		t = metadata.DataType{Root: root}
		if root == metadata.TinyInt && n == 1 && args[0] == 1 {
			t = metadata.BooleanType()
		}
		if p.acceptKeyword("UNSIGNED") && t.Root != metadata.Boolean {
			t.Root = unsignedWider[root]
		} else {
			p.acceptKeyword("SIGNED")
		}
		p.acceptKeyword("ZEROFILL")
	case metadata.Boolean, metadata.Date:
		t = metadata.DataType{Root: root}
	case metadata.Bytes:
		// VARBINARY(n) and BLOB(n) are stored as BYTES; the length is not kept.
		t = metadata.BytesType()
		if name != "BYTES" {
			if _, _, err := p.optLength(1); err != nil {
				return t, err
			}
		}
	case metadata.Float, metadata.Double:
		// MySQL's FLOAT(p), FLOAT(m, d) and DOUBLE(m, d) only hint at
		// precision and rounding; the value stays a binary float.
		t = metadata.DataType{Root: root}
		if root == metadata.Double {
			p.acceptKeyword("PRECISION")
		}
		if _, _, err := p.optLength(2); err != nil {
			return t, err
		}
		p.acceptKeyword("UNSIGNED")
	case metadata.String:
		t = metadata.StringType()
		if name != "STRING" {
			// VARCHAR(n) and TEXT(n) are stored as STRING; the length is
			// not kept.
			if _, _, err := p.optLength(1); err != nil {
				return t, err
			}
		}
	case metadata.Decimal:
		args, n, err := p.optLength(2)
		if err != nil {
			return t, err
		}
		t = metadata.DecimalType(metadata.DefaultDecimalPrec, metadata.DefaultDecimalScale)
		if n >= 1 {
			t.Precision, t.Scale = args[0], 0
		}
		if n == 2 {
			t.Scale = args[1]
		}
		// UNSIGNED narrows MySQL's range without widening it.
		p.acceptKeyword("UNSIGNED")
	case metadata.Char, metadata.Binary:
		args, n, err := p.optLength(1)
		if err != nil {
			return t, err
		}
		t = metadata.DataType{Root: root, Length: 1}
		if n == 1 {
			t.Length = args[0]
		}
	case metadata.Time, metadata.Timestamp, metadata.TimestampLTZ:
		args, n, err := p.optLength(1)
		if err != nil {
			return t, err
		}
		prec := metadata.DefaultTimestampPrec
		switch {
		case root == metadata.Time:
			prec = metadata.DefaultTimePrecision
		case name == "DATETIME":
			// MySQL's DATETIME is whole seconds unless it says otherwise.
			prec = 0
		}
		if n == 1 {
			prec = args[0]
		}
		switch {
		case root != metadata.TimestampLTZ && p.acceptKeyword("WITHOUT", "TIME", "ZONE"):
		case root == metadata.Timestamp && p.acceptKeyword("WITH", "LOCAL", "TIME", "ZONE"):
			root = metadata.TimestampLTZ
		}
		t = metadata.DataType{Root: root, Precision: prec}
	case metadata.Array:
		if err := p.expectPunct("<"); err != nil {
			return t, err
		}
		elem, err := p.elementType(depth)
		if err != nil {
			return t, err
		}
		if err := p.expectPunct(">"); err != nil {
			return t, err
		}
		t = metadata.ArrayType(elem)
	case metadata.Map:
		if err := p.expectPunct("<"); err != nil {
			return t, err
		}
		k, err := p.elementType(depth)
		if err != nil {
			return t, err
		}
		if err := p.expectPunct(","); err != nil {
			return t, err
		}
		v, err := p.elementType(depth)
		if err != nil {
			return t, err
		}
		if err := p.expectPunct(">"); err != nil {
			return t, err
		}
		t = metadata.MapType(k, v)
	case metadata.Row:
		var err error
		if t, err = p.rowType(depth); err != nil {
			return t, err
		}
	}
	if err := t.Validate(); err != nil {
		return t, &PosError{Pos: start.pos, Err: err}
	}
	return t, nil
}

// elementType reads the type of an array element, map key or value, or row
// field. NOT NULL and NULL are accepted for Flink compatibility; nested
// elements are always nullable in Fluss's type system (map keys never),
// so the marker is not kept.
func (p *parser) elementType(depth int) (metadata.DataType, error) {
	t, err := p.dataType(depth + 1)
	if err != nil {
		return t, err
	}
	if !p.acceptKeyword("NOT", "NULL") {
		p.acceptKeyword("NULL")
	}
	return t, nil
}

// rowType reads ROW<name type, ...> or ROW(name type, ...).
func (p *parser) rowType(depth int) (metadata.DataType, error) {
	closing := ">"
	if p.acceptPunct("(") {
		closing = ")"
	} else if err := p.expectPunct("<"); err != nil {
		return metadata.DataType{}, err
	}
	var fields []metadata.Field
	for {
		name, err := p.ident("field name")
		if err != nil {
			return metadata.DataType{}, err
		}
		ft, err := p.elementType(depth)
		if err != nil {
			return metadata.DataType{}, err
		}
		if p.peek().kind == tokString {
			// Flink allows a field description here; Fluss keeps none.
			p.i++
		}
		fields = append(fields, metadata.Field{Name: name, Type: ft})
		if !p.acceptPunct(",") {
			break
		}
	}
	if err := p.expectPunct(closing); err != nil {
		return metadata.DataType{}, err
	}
	return metadata.RowType(fields...), nil
}

// optLength reads an optional '(' n [, m] ')' with at most max numbers and
// returns them and how many there were.
func (p *parser) optLength(max int) ([2]int, int, error) {
	var args [2]int
	if !p.acceptPunct("(") {
		return args, 0, nil
	}
	n := 0
	for {
		t := p.peek()
		if t.kind != tokNumber {
			return args, 0, p.expected("a number")
		}
		v, err := strconv.Atoi(t.text)
		if err != nil || v > 1<<30 {
			return args, 0, p.errAt(t, "expected a small non-negative integer")
		}
		p.i++
		args[n] = v
		n++
		if n == max || !p.acceptPunct(",") {
			break
		}
	}
	return args, n, p.expectPunct(")")
}
