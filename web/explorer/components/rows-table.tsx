/**
 * A table of rows, one column per field, in the horizontal scroller every list of the explorer
 * uses (events, killmails, an entity's facts, the status panels): column headers scoped to
 * their column, and each row's cells from its columns' declarations.
 */
import type { ComponentChildren } from 'preact';

export interface Column<T> {
  title: string;
  cell(row: T): ComponentChildren;
  /** The cell's attributes (`class`, `data-*`). */
  attributes?: Record<string, string>;
  /** The row's own header (`<th scope="row">`) rather than a data cell. */
  rowHeader?: true;
}

export function RowsTable<T>(props: {
  class: string;
  testid?: string;
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey(row: T, index: number): string | number;
  /** A row's attributes (`data-*` the tests and links find it by). */
  rowAttributes?(row: T): Record<string, unknown>;
}) {
  const { columns, rows, rowKey, rowAttributes } = props;
  return (
    <div class="scroll">
      <table class={props.class} data-testid={props.testid}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.title} scope="col">
                {column.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, index) => (
            <tr key={rowKey(row, index)} {...rowAttributes?.(row)}>
              {columns.map((column) =>
                column.rowHeader ? (
                  <th key={column.title} scope="row" {...column.attributes}>
                    {column.cell(row)}
                  </th>
                ) : (
                  <td key={column.title} {...column.attributes}>
                    {column.cell(row)}
                  </td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
