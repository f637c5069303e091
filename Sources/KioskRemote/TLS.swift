import CKioskTLS

/// A certificate (chain) and its private key, checked and ready for VeNCrypt's TLS sessions (GnuTLS, loaded on
/// first use). Made before the loop starts, from the bytes of `vnc.tls`'s files; immutable once made, and shared by
/// the sessions of every output's server (GnuTLS reads certificate credentials from any session without locking).
public final class TLSCredentials: @unchecked Sendable {
    /// What is wrong, and with which file.
    public enum Fault: Error, CustomStringConvertible, Sendable {
        case certificate(String)
        case key(String)
        /// GnuTLS cannot be loaded or refused for another reason.
        case library(String)

        public var description: String {
            switch self {
            case .certificate(let reason), .key(let reason), .library(let reason): reason
            }
        }
    }

    let pointer: OpaquePointer

    /// - Throws: `Fault` naming the file at fault (a certificate that is not PEM X.509, a key that is not an
    ///   unencrypted PEM private key or not the certificate's) and GnuTLS's reason.
    public init(certificate: [UInt8], key: [UInt8]) throws(Fault) {
        var which: Int32 = 0
        var error = [CChar](repeating: 0, count: 512)
        let made = certificate.withUnsafeBufferPointer { cert in
            key.withUnsafeBufferPointer { key in
                kiosk_tls_credentials_new(cert.baseAddress, cert.count, key.baseAddress, key.count, &which, &error, error.count)
            }
        }
        guard let made else {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            switch Int(which) {
            case Int(KIOSK_TLS_CERTIFICATE): throw .certificate(reason)
            case Int(KIOSK_TLS_KEY): throw .key(reason)
            default: throw .library(reason)
            }
        }
        pointer = made
    }

    deinit { kiosk_tls_credentials_free(pointer) }
}

/// One client's TLS session (server side) over memory buffers: `receive` takes what the socket read and gives the
/// decrypted bytes; `encrypt` turns bytes to send into records; `takeOutput` gives what the socket must carry. Never
/// waits: GnuTLS sees an empty input as EAGAIN. What it holds is bounded: at most `maxInput` bytes from the peer
/// not yet taken, and the output the caller lets grow (the server encrypts only when the socket has taken the
/// last records). Main thread.
final class TLSConnection {
    private let session: OpaquePointer
    private(set) var isEstablished = false
    static let maxInput = kiosk_tls_max_input()
    /// The most plaintext encrypted at once: a few records.
    static let encryptChunk = 64 * 1024

    init(credentials: TLSCredentials) throws(VNCError) {
        var error = [CChar](repeating: 0, count: 512)
        guard let made = kiosk_tls_session_new(credentials.pointer, &error, error.count) else {
            throw VNCError("TLS: " + String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        session = made
    }

    deinit { kiosk_tls_session_free(session) }

    /// Feeds `bytes` from the socket; returns the application bytes they completed, and whether the handshake
    /// finished with them.
    /// - Throws: why the session is over (a fatal TLS error, the peer's close, a peer that sends too much).
    func receive(_ bytes: ArraySlice<UInt8>) throws(VNCError) -> (plain: [UInt8], established: Bool) {
        let fed = bytes.withUnsafeBufferPointer { kiosk_tls_feed(session, $0.baseAddress, $0.count) }
        guard fed == 0 else { throw Self.failure(Int(fed)) }
        var established = false
        if !isEstablished {
            let status = kiosk_tls_handshake(session)
            if status == KIOSK_TLS_WANTS_MORE { return ([], false) }
            guard status == 1 else { throw Self.failure(Int(status), during: "handshake") }
            isEstablished = true
            established = true
        }
        var plain: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { kiosk_tls_recv(session, $0.baseAddress, $0.count) }
            if count > 0 {
                plain += buffer[0..<count]
                continue
            }
            if count == Int(KIOSK_TLS_WANTS_MORE) { return (plain, established) }
            throw Self.failure(count)
        }
    }

    /// Encrypts up to `encryptChunk` bytes of `bytes` into the output; returns how many it took.
    /// - Throws: GnuTLS's reason when it cannot.
    func encrypt(_ bytes: ArraySlice<UInt8>) throws(VNCError) -> Int {
        let count = min(bytes.count, Self.encryptChunk)
        let sent = bytes.withUnsafeBufferPointer { kiosk_tls_send(session, $0.baseAddress, count) }
        guard sent > 0 else { throw Self.failure(sent, during: "send") }
        return sent
    }

    /// The records and handshake messages made since the last call, for the socket.
    func takeOutput() -> [UInt8] {
        var count = 0
        guard let bytes = kiosk_tls_output(session, &count) else { return [] }
        let output = Array(UnsafeBufferPointer(start: bytes, count: count))
        kiosk_tls_consumed(session, count)
        return output
    }

    private static func failure(_ code: Int, during: String? = nil) -> VNCError {
        let text = String(cString: kiosk_tls_strerror(Int32(clamping: code)))
        return VNCError("TLS" + (during.map { " " + $0 } ?? "") + ": " + text)
    }
}
