import CZlib

/// One connection's zlib stream for ZRLE (RFC 6143 §7.7.6): every ZRLE rectangle of a connection is compressed with
/// the same stream, each flushed to a byte boundary so the viewer can decode it at once. The `z_stream` lives at a
/// fixed address (zlib keeps a pointer back to it). Used on the encoding worker, by one update at a time (the server
/// has at most one encoding in flight per client), so it is `@unchecked Sendable`.
public final class ZRLEStream: @unchecked Sendable {
    private let stream: UnsafeMutablePointer<z_stream>

    /// - Throws: `VNCError` with zlib's status when the stream cannot be made (out of memory).
    public init() throws {
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // deflateInit is a macro: its function with the version and structure size it passes.
        let status = deflateInit_(stream, Z_DEFAULT_COMPRESSION, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deallocate()
            throw VNCError("zlib: deflateInit failed with status \(status)")
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// `input` compressed and flushed (Z_SYNC_FLUSH): the bytes of one rectangle.
    func compress(_ input: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: max(1024, Int(deflateBound(stream, uLong(input.count))) + 64))
        var input = input
        input.withUnsafeMutableBufferPointer { source in
            stream.pointee.next_in = source.baseAddress
            stream.pointee.avail_in = uInt(source.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { target in
                    stream.pointee.next_out = target.baseAddress
                    stream.pointee.avail_out = uInt(target.count)
                    _ = deflate(stream, Z_SYNC_FLUSH)
                    output.append(contentsOf: target[0..<(target.count - Int(stream.pointee.avail_out))])
                }
            } while stream.pointee.avail_out == 0
            stream.pointee.next_in = nil
        }
        return output
    }
}
