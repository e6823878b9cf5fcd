// @requires recordio
// mx.recordio: RecordIO files (js/recordio.mjs). Readers open asynchronously (the constructor with
// flag 'r' returns a Promise); writers are synchronous.

/** an image record's header: label a number, or the labels when flag > 0 */
export interface IRHeaderFields { flag: number; label: number | Float32Array | number[]; id: number | bigint; id2: number | bigint }
type RecordBytes = Uint8Array | ArrayBuffer | ArrayBufferView | string;
declare class _MXRecordIO {
  readonly uri: unknown;
  readonly flag: 'r' | 'w';
  readonly writable: boolean;
  readonly is_open: boolean;
  readonly isOpen: boolean;
  /** the next record's bytes, or null at the end (a reader) */
  read(): Uint8Array | null;
  /** appends a record (a writer) */
  write(buf: RecordBytes): void;
  /** back to the first record (a reader) */
  reset(): void;
  /** the write position in bytes (a writer) */
  tell(): number;
  /** the bytes written so far (a writer) */
  getBytes(): Uint8Array;
  /** a writer with a path writes its file (Node) */
  close(): void;
}
declare class _MXIndexedRecordIO extends _MXRecordIO {
  readonly idx: Map<unknown, number>;
  readonly keys: unknown[];
  seek(idx: unknown): void;
  readIdx(idx: unknown): Uint8Array | null;
  read_idx(idx: unknown): Uint8Array | null;
  writeIdx(idx: unknown, buf: RecordBytes): void;
  write_idx(idx: unknown, buf: RecordBytes): void;
  /** the index file's text (a writer) */
  getIndex(): string;
}
export declare namespace recordio {
  const MXRecordIO: {
    new (uri: string | URL | Uint8Array | ArrayBuffer, flag: 'r'): Promise<_MXRecordIO>;
    new (uri: string | null, flag: 'w'): _MXRecordIO;
  };
  const MXIndexedRecordIO: {
    new (idxPath: string | URL | Uint8Array, uri: string | URL | Uint8Array | ArrayBuffer, flag: 'r', keyType?: (k: string) => unknown): Promise<_MXIndexedRecordIO>;
    new (idxPath: string | null, uri: string | null, flag: 'w', keyType?: (k: string) => unknown): _MXIndexedRecordIO;
  };
  function IRHeader(flag: number, label: number | number[] | Float32Array, id: number | bigint, id2: number | bigint): IRHeaderFields;
  /** the header, then the bytes */
  function pack(header: IRHeaderFields | [number, number | number[], number, number], s: RecordBytes): Uint8Array;
  function unpack(s: RecordBytes): [IRHeaderFields, Uint8Array];
  /** resolves to [header, image decoded as OpenCV leaves it (BGR, or grey with iscolor 0)] */
  function unpack_img(s: RecordBytes, iscolor?: number): Promise<[IRHeaderFields, NDArray]>;
  const unpackImg: typeof unpack_img;
  /** throws: there is no image encoder */
  function pack_img(...args: unknown[]): never;
  const packImg: typeof pack_img;
}
