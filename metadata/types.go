package metadata

import (
	"fmt"
	"strings"
)

// TypeRoot is the kind of a DataType, named as in Fluss.
type TypeRoot uint8

// The type roots of DESIGN §2.
const (
	Boolean TypeRoot = iota + 1
	TinyInt
	SmallInt
	Int
	BigInt
	Float
	Double
	Decimal
	Char
	String
	Binary
	Bytes
	Date
	Time
	Timestamp
	TimestampLTZ
	Array
	Map
	Row
)

var rootNames = [...]string{
	Boolean:      "BOOLEAN",
	TinyInt:      "TINYINT",
	SmallInt:     "SMALLINT",
	Int:          "INT",
	BigInt:       "BIGINT",
	Float:        "FLOAT",
	Double:       "DOUBLE",
	Decimal:      "DECIMAL",
	Char:         "CHAR",
	String:       "STRING",
	Binary:       "BINARY",
	Bytes:        "BYTES",
	Date:         "DATE",
	Time:         "TIME",
	Timestamp:    "TIMESTAMP",
	TimestampLTZ: "TIMESTAMP_LTZ",
	Array:        "ARRAY",
	Map:          "MAP",
	Row:          "ROW",
}

func (r TypeRoot) String() string {
	if int(r) < len(rootNames) && rootNames[r] != "" {
		return rootNames[r]
	}
	return fmt.Sprintf("TypeRoot(%d)", int(r))
}

// Limits of the parameterised types.
const (
	MaxDecimalPrecision   = 38
	MaxTimePrecision      = 9
	DefaultTimePrecision  = 0
	DefaultTimestampPrec  = 6
	MaxCharLength         = 1 << 16
	DefaultDecimalPrec    = 10
	DefaultDecimalScale   = 0
	DefaultCharLength     = 1
	DefaultBinaryLength   = 1
	MaxBinaryLength       = 1 << 16
	maxNestingDepthParsed = 32
)

// DataType is a Fluss data type. It is a small value; nested types share
// their element types through pointers and are never mutated after
// construction, so a DataType is safe to copy and to use concurrently.
//
// Nested elements (array elements, map values, row fields) are nullable;
// map keys are not.
type DataType struct {
	Root TypeRoot
	// Length is n of CHAR(n) and BINARY(n).
	Length int
	// Precision is p of DECIMAL(p,s), TIME(p), TIMESTAMP(p), TIMESTAMP_LTZ(p).
	Precision int
	// Scale is s of DECIMAL(p,s).
	Scale int
	// Elem is the element type of ARRAY and the key type of MAP.
	Elem *DataType
	// Value is the value type of MAP.
	Value *DataType
	// Fields are the fields of ROW.
	Fields []Field
}

// Field is a named field of a ROW type.
type Field struct {
	Name string
	Type DataType
}

// Constructors for the common types.
func BooleanType() DataType           { return DataType{Root: Boolean} }
func TinyIntType() DataType           { return DataType{Root: TinyInt} }
func SmallIntType() DataType          { return DataType{Root: SmallInt} }
func IntType() DataType               { return DataType{Root: Int} }
func BigIntType() DataType            { return DataType{Root: BigInt} }
func FloatType() DataType             { return DataType{Root: Float} }
func DoubleType() DataType            { return DataType{Root: Double} }
func StringType() DataType            { return DataType{Root: String} }
func BytesType() DataType             { return DataType{Root: Bytes} }
func DateType() DataType              { return DataType{Root: Date} }
func CharType(n int) DataType         { return DataType{Root: Char, Length: n} }
func BinaryType(n int) DataType       { return DataType{Root: Binary, Length: n} }
func DecimalType(p, s int) DataType   { return DataType{Root: Decimal, Precision: p, Scale: s} }
func TimeType(p int) DataType         { return DataType{Root: Time, Precision: p} }
func TimestampType(p int) DataType    { return DataType{Root: Timestamp, Precision: p} }
func TimestampLTZType(p int) DataType { return DataType{Root: TimestampLTZ, Precision: p} }
func ArrayType(elem DataType) DataType {
	return DataType{Root: Array, Elem: &elem}
}
func MapType(k, v DataType) DataType {
	return DataType{Root: Map, Elem: &k, Value: &v}
}
func RowType(fields ...Field) DataType {
	return DataType{Root: Row, Fields: fields}
}

// IsInteger reports whether t is TINYINT, SMALLINT, INT or BIGINT.
func (t DataType) IsInteger() bool {
	return t.Root >= TinyInt && t.Root <= BigInt
}

// IsNumeric reports whether t is an integer, FLOAT, DOUBLE or DECIMAL.
func (t DataType) IsNumeric() bool {
	return t.Root >= TinyInt && t.Root <= Decimal
}

// IsString reports whether t is CHAR or STRING.
func (t DataType) IsString() bool { return t.Root == Char || t.Root == String }

// IsBinary reports whether t is BINARY or BYTES.
func (t DataType) IsBinary() bool { return t.Root == Binary || t.Root == Bytes }

// IsNested reports whether t is ARRAY, MAP or ROW.
func (t DataType) IsNested() bool { return t.Root == Array || t.Root == Map || t.Root == Row }

// IsTemporal reports whether t is DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ.
func (t DataType) IsTemporal() bool { return t.Root >= Date && t.Root <= TimestampLTZ }

// HasOrder reports whether values of t have a total order usable by
// statistics and range predicates.
func (t DataType) HasOrder() bool { return !t.IsNested() }

// Equal reports whether two types are identical.
func (t DataType) Equal(o DataType) bool {
	if t.Root != o.Root || t.Length != o.Length || t.Precision != o.Precision || t.Scale != o.Scale {
		return false
	}
	if (t.Elem == nil) != (o.Elem == nil) || (t.Value == nil) != (o.Value == nil) || len(t.Fields) != len(o.Fields) {
		return false
	}
	if t.Elem != nil && !t.Elem.Equal(*o.Elem) {
		return false
	}
	if t.Value != nil && !t.Value.Equal(*o.Value) {
		return false
	}
	for i := range t.Fields {
		if t.Fields[i].Name != o.Fields[i].Name || !t.Fields[i].Type.Equal(o.Fields[i].Type) {
			return false
		}
	}
	return true
}

// String renders t in the DDL syntax that ParseDataType reads back.
func (t DataType) String() string {
	var b strings.Builder
	t.format(&b)
	return b.String()
}

func (t DataType) format(b *strings.Builder) {
	switch t.Root {
	case Decimal:
		fmt.Fprintf(b, "DECIMAL(%d, %d)", t.Precision, t.Scale)
	case Char:
		fmt.Fprintf(b, "CHAR(%d)", t.Length)
	case Binary:
		fmt.Fprintf(b, "BINARY(%d)", t.Length)
	case Time, Timestamp, TimestampLTZ:
		fmt.Fprintf(b, "%s(%d)", t.Root, t.Precision)
	case Array:
		b.WriteString("ARRAY<")
		t.Elem.format(b)
		b.WriteString(">")
	case Map:
		b.WriteString("MAP<")
		t.Elem.format(b)
		b.WriteString(", ")
		t.Value.format(b)
		b.WriteString(">")
	case Row:
		b.WriteString("ROW<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteIdent(f.Name))
			b.WriteString(" ")
			f.Type.format(b)
		}
		b.WriteString(">")
	default:
		b.WriteString(t.Root.String())
	}
}

// QuoteString returns s as a SQL string literal: in single quotes, a
// quote doubled.
func QuoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// QuoteIdent returns name as is when it is a plain identifier, else in
// backquotes.
func QuoteIdent(name string) string {
	plain := name != ""
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	return Backquote(name)
}

// Backquote returns name in backquotes, with the backquotes in it doubled:
// the form every SQL text of ours quotes an identifier in.
func Backquote(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// Validate checks the parameters of t against Fluss's limits.
func (t DataType) Validate() error {
	switch t.Root {
	case Decimal:
		if t.Precision < 1 || t.Precision > MaxDecimalPrecision {
			return fmt.Errorf("%w: DECIMAL precision %d is out of range [1, %d]", ErrInvalidType, t.Precision, MaxDecimalPrecision)
		}
		if t.Scale < 0 || t.Scale > t.Precision {
			return fmt.Errorf("%w: DECIMAL scale %d is out of range [0, %d]", ErrInvalidType, t.Scale, t.Precision)
		}
	case Char:
		if t.Length < 1 || t.Length > MaxCharLength {
			return fmt.Errorf("%w: CHAR length %d is out of range [1, %d]", ErrInvalidType, t.Length, MaxCharLength)
		}
	case Binary:
		if t.Length < 1 || t.Length > MaxBinaryLength {
			return fmt.Errorf("%w: BINARY length %d is out of range [1, %d]", ErrInvalidType, t.Length, MaxBinaryLength)
		}
	case Time, Timestamp, TimestampLTZ:
		if t.Precision < 0 || t.Precision > MaxTimePrecision {
			return fmt.Errorf("%w: %s precision %d is out of range [0, %d]", ErrInvalidType, t.Root, t.Precision, MaxTimePrecision)
		}
	case Array:
		if t.Elem == nil {
			return fmt.Errorf("%w: ARRAY without element type", ErrInvalidType)
		}
		return t.Elem.Validate()
	case Map:
		if t.Elem == nil || t.Value == nil {
			return fmt.Errorf("%w: MAP without key or value type", ErrInvalidType)
		}
		if t.Elem.IsNested() {
			return fmt.Errorf("%w: MAP key type %s must not be nested", ErrInvalidType, t.Elem)
		}
		if err := t.Elem.Validate(); err != nil {
			return err
		}
		return t.Value.Validate()
	case Row:
		if len(t.Fields) == 0 {
			return fmt.Errorf("%w: ROW without fields", ErrInvalidType)
		}
		seen := make(map[string]bool, len(t.Fields))
		for _, f := range t.Fields {
			k := strings.ToLower(f.Name)
			if seen[k] {
				return fmt.Errorf("%w: ROW field %q is declared twice", ErrInvalidType, f.Name)
			}
			seen[k] = true
			if err := f.Type.Validate(); err != nil {
				return err
			}
		}
	case 0:
		return fmt.Errorf("%w: missing type", ErrInvalidType)
	}
	return nil
}

// StatsSupported reports whether record batches keep min, max and null
// count statistics for a column of type t: Fluss's list of BOOLEAN, the
// integers, FLOAT, DOUBLE, DECIMAL, CHAR, STRING, DATE, TIME, TIMESTAMP and
// TIMESTAMP_LTZ (not binary or nested types).
func (t DataType) StatsSupported() bool {
	switch t.Root {
	case Boolean, TinyInt, SmallInt, Int, BigInt, Float, Double, Decimal,
		Char, String, Date, Time, Timestamp, TimestampLTZ:
		return true
	}
	return false
}

// MySQLType returns MySQL's name for t, lower case, as MySQL's
// information_schema.columns reports it in column_type: BOOLEAN is
// tinyint(1), STRING longtext, BYTES longblob, TIMESTAMP(p) datetime(p),
// TIMESTAMP_LTZ(p) timestamp(p). Types MySQL lacks (ARRAY, MAP, ROW) keep
// their own names; MySQL would call them json.
func (t DataType) MySQLType() string {
	switch t.Root {
	case Boolean:
		return "tinyint(1)"
	case String:
		return "longtext"
	case Bytes:
		return "longblob"
	case Timestamp:
		return fmt.Sprintf("datetime(%d)", t.Precision)
	case TimestampLTZ:
		return fmt.Sprintf("timestamp(%d)", t.Precision)
	case Char:
		return fmt.Sprintf("char(%d)", t.Length)
	case Binary:
		return fmt.Sprintf("binary(%d)", t.Length)
	case Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case Time:
		return fmt.Sprintf("time(%d)", t.Precision)
	case Array, Map, Row:
		return strings.ToLower(t.String())
	case 0:
		return "null"
	}
	return strings.ToLower(t.Root.String())
}
