package metadata

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fkTables(t *testing.T) (child, parent TableInfo) {
	t.Helper()
	parent, err := NewTableInfo(TableDescriptor{Path: TablePath{Database: "d", Table: "users"}, Schema: Schema{
		Columns: []Column{{Name: "id", Type: BigIntType()}, {Name: "email", Type: StringType()}}, PrimaryKey: []string{"id"}}}, 1, 1, time.Unix(0, 0))
	require.NoError(t, err)
	child, err = NewTableInfo(TableDescriptor{Path: TablePath{Database: "d", Table: "orders"}, Schema: Schema{
		Columns: []Column{{Name: "id", Type: BigIntType()}, {Name: "user_id", Type: BigIntType()}}}}, 2, 1, time.Unix(0, 0))
	require.NoError(t, err)
	return child, parent
}

func TestForeignKeyAddDrop(t *testing.T) {
	child, parent := fkTables(t)
	fk := ForeignKey{Name: "fk_u", Columns: []string{"USER_ID"}, RefTable: parent.Path, RefColumns: []string{"ID"}, OnDelete: "CASCADE"}
	fk, err := CheckReference(&child, fk, &parent)
	require.NoError(t, err)
	require.Equal(t, []string{"id"}, fk.RefColumns, "spelled as the parent spells them")
	got, err := AddForeignKey(child, fk)
	require.NoError(t, err)
	require.Equal(t, []string{"user_id"}, got.ForeignKeys[0].Columns)
	require.Empty(t, child.ForeignKeys, "the table given is not changed")

	_, err = AddForeignKey(got, fk)
	require.ErrorIs(t, err, ErrExists)
	_, err = AddForeignKey(child, ForeignKey{Name: "x", Columns: []string{"nope"}, RefTable: parent.Path, RefColumns: []string{"id"}})
	require.ErrorIs(t, err, ErrNotFound)
	_, err = AddForeignKey(child, ForeignKey{Name: "x", Columns: []string{"user_id"}, RefTable: parent.Path, RefColumns: []string{"id"}, OnDelete: "EXPLODE"})
	require.ErrorIs(t, err, ErrInvalidTable)
	_, err = CheckReference(&child, ForeignKey{Name: "x", Columns: []string{"user_id"}, RefColumns: []string{"email"}}, &parent)
	require.ErrorContains(t, err, "is BIGINT but d.users.email is STRING")

	dropped, err := DropForeignKey(got, "FK_U")
	require.NoError(t, err)
	require.Empty(t, dropped.ForeignKeys)
	require.Len(t, got.ForeignKeys, 1, "the table given is not changed")
	_, err = DropForeignKey(dropped, "fk_u")
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, `"fk_u"`)
}

// A table info stored before foreign keys were recorded has none; one
// stored with them reads them back.
func TestForeignKeyJSON(t *testing.T) {
	child, parent := fkTables(t)
	old, err := json.Marshal(child)
	require.NoError(t, err)
	require.NotContains(t, string(old), "foreign_keys")
	var back TableInfo
	require.NoError(t, json.Unmarshal(old, &back))
	require.Nil(t, back.ForeignKeys)

	with, err := AddForeignKey(child, ForeignKey{Name: "fk", Columns: []string{"user_id"}, RefTable: parent.Path, RefColumns: []string{"id"}})
	require.NoError(t, err)
	buf, err := json.Marshal(with)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(buf, &back))
	require.Equal(t, with.ForeignKeys, back.ForeignKeys)
}
