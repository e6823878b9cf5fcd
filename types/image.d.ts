// @requires image
// mx.image (also mx.img): MXNet's image.py helpers on (H, W, C) NDArrays and fromPixels
// (js/image.mjs). Appended to dist/index.d.ts by scripts/gen-api.mjs when the module has mx.image.

/** What fromPixels reads: ImageData or {data, width, height} of RGBA bytes, a canvas, an OffscreenCanvas,
 * an ImageBitmap, a loaded <img>, a <video> with a frame, or a VideoFrame. */
export type PixelSource = { data: Uint8ClampedArray | Uint8Array; width: number; height: number }
  | HTMLCanvasElement | OffscreenCanvas | ImageBitmap | HTMLImageElement | HTMLVideoElement | VideoFrame | ImageData;
/** A decoder for what the platform cannot decode (e.g. JPEG in Node): RGBA bytes */
export type ImageDecoder = (bytes: Uint8Array, mimeType: string | null) =>
  { data: Uint8ClampedArray | Uint8Array; width: number; height: number }
  | Promise<{ data: Uint8ClampedArray | Uint8Array; width: number; height: number }>;
/** crop box: [x0, y0, w, h] */
export type CropBox = [number, number, number, number];

export declare namespace image {
  /** an (H, W, channels) uint8 NDArray of the source's pixels: 3 RGB, 4 RGBA, 1 grey */
  function fromPixels(source: PixelSource, channels?: 1 | 3 | 4): NDArray;
  function fromPixels(source: PixelSource, options: { channels?: 1 | 3 | 4 }): NDArray;
  function fromPixels(options: { source: PixelSource; channels?: 1 | 3 | 4 }): NDArray;
  /** decodes an image file's bytes: (H, W, 3) RGB (flag 1) or (H, W, 1) grey (flag 0), uint8 */
  function imdecode(...args: Args<'image.imdecode'>): Promise<NDArray>;
  /** reads a path (Node) or URL, then imdecode */
  function imread(...args: Args<'image.imread'>): Promise<NDArray>;
  /** resizes to w x h (OpenCV's interpolation codes) */
  function imresize(...args: Args<'image.imresize'>): NDArray;
  /** resizes so that the shorter edge is size */
  function resize_short(...args: Args<'image.resize_short'>): NDArray;
  const resizeShort: typeof resize_short;
  function fixed_crop(...args: Args<'image.fixed_crop'>): NDArray;
  const fixedCrop: typeof fixed_crop;
  /** [cropped, [x0, y0, w, h]] */
  function random_crop(...args: Args<'image.random_crop'>): [NDArray, CropBox];
  const randomCrop: typeof random_crop;
  /** [cropped, [x0, y0, w, h]] */
  function center_crop(...args: Args<'image.center_crop'>): [NDArray, CropBox];
  const centerCrop: typeof center_crop;
  function random_size_crop(...args: Args<'image.random_size_crop'>): [NDArray, CropBox];
  const randomSizeCrop: typeof random_size_crop;
  function scale_down(...args: Args<'image.scale_down'>): [number, number];
  const scaleDown: typeof scale_down;
  /** (src - mean) / std */
  function color_normalize(...args: Args<'image.color_normalize'>): NDArray;
  const colorNormalize: typeof color_normalize;
}
export { image as img };
