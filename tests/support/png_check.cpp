// SPDX-License-Identifier: BSD-3-Clause
// Decodes a PNG screenshot (8-bit RGB/RGBA, non-interlaced, as Chromium writes them) and fails
// when it is blank: too few pixels that are not the background, or too few colours.
// usage: png_check FILE.png  -> prints "WxH, N% not white, K colours"; exit 1 if blank.
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fail(const std::string& msg) {
  std::fprintf(stderr, "png_check: %s\n", msg.c_str());
  std::exit(1);
}

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) fail("usage: png_check FILE.png");
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) fail(std::string(argv[1]) + ": cannot open");
  const std::vector<unsigned char> file((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
  static const unsigned char kSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (file.size() < 8 || !std::equal(kSig, kSig + 8, file.begin())) fail("not a PNG file");
  std::uint32_t width = 0, height = 0;
  int channels = 0;
  std::vector<unsigned char> idat;
  for (std::size_t pos = 8; pos + 12 <= file.size();) {
    const std::uint32_t len = be32(&file[pos]);
    const std::string type(reinterpret_cast<const char*>(&file[pos + 4]), 4);
    if (pos + 12 + len > file.size()) fail("truncated chunk " + type);
    const unsigned char* data = &file[pos + 8];
    if (type == "IHDR") {
      width = be32(data);
      height = be32(data + 4);
      const int depth = data[8], colour = data[9], interlace = data[12];
      if (depth != 8 || (colour != 2 && colour != 6) || interlace != 0)
        fail("unsupported PNG (depth " + std::to_string(depth) + ", colour type " +
             std::to_string(colour) + ", interlace " + std::to_string(interlace) + ")");
      channels = colour == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat.insert(idat.end(), data, data + len);
    }
    pos += 12 + len;
  }
  if (width == 0 || height == 0 || idat.empty()) fail("no image data");
  const std::size_t stride = std::size_t{width} * channels;
  std::vector<unsigned char> raw((stride + 1) * height);
  uLongf raw_len = static_cast<uLongf>(raw.size());
  if (uncompress(raw.data(), &raw_len, idat.data(), static_cast<uLong>(idat.size())) != Z_OK ||
      raw_len != raw.size())
    fail("image data does not inflate to " + std::to_string(raw.size()) + " bytes");
  std::vector<unsigned char> img(stride * height), prev(stride, 0);
  for (std::uint32_t y = 0; y < height; ++y) {
    const unsigned char* line = &raw[y * (stride + 1)];
    unsigned char* out = &img[y * stride];
    for (std::size_t x = 0; x < stride; ++x) {
      const int a = x >= static_cast<std::size_t>(channels) ? out[x - channels] : 0;
      const int b = prev[x];
      const int c = x >= static_cast<std::size_t>(channels) ? prev[x - channels] : 0;
      int v = line[1 + x];
      switch (line[0]) {
        case 0:
          break;
        case 1:
          v += a;
          break;
        case 2:
          v += b;
          break;
        case 3:
          v += (a + b) / 2;
          break;
        case 4:
          v += paeth(a, b, c);
          break;
        default:
          fail("bad filter type " + std::to_string(line[0]));
      }
      out[x] = static_cast<unsigned char>(v);
    }
    std::copy(out, out + stride, prev.begin());
  }
  std::size_t not_white = 0;
  std::set<std::uint32_t> colours;
  for (std::size_t i = 0; i < img.size(); i += channels) {
    const std::uint32_t rgb = (std::uint32_t{img[i]} << 16) | (img[i + 1] << 8) | img[i + 2];
    if (img[i] < 240 || img[i + 1] < 240 || img[i + 2] < 240) ++not_white;
    if (colours.size() < 1000) colours.insert(rgb);
  }
  const double share = 100.0 * static_cast<double>(not_white) / (double(width) * height);
  std::printf("%ux%u, %.1f%% not white, %zu%s colours\n", width, height, share, colours.size(),
              colours.size() >= 1000 ? "+" : "");
  // The plot alone covers about half of the picture in solid colour.
  if (share < 10.0 || colours.size() < 6) fail("the screenshot is blank or nearly so");
  return 0;
}
