/// Arithmetic in GF(2^8) reduced by x^8 + x^4 + x^3 + x^2 + 1 (0x11D), the field ISO/IEC 18004 fixes for QR codes.
enum GF256 {
    /// `exp[i]` is α^i; doubled in length so a product can index `log[a] + log[b]` without a modulo.
    static let exp: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 512)
        var value = 1
        for i in 0..<255 {
            table[i] = UInt8(value)
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        for i in 255..<512 { table[i] = table[i - 255] }
        return table
    }()

    static let log: [Int] = {
        var table = [Int](repeating: 0, count: 256)
        for i in 0..<255 { table[Int(exp[i])] = i }
        return table
    }()

    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return exp[log[Int(a)] + log[Int(b)]]
    }
}

/// Systematic Reed–Solomon encoder: the error correction codewords are the remainder of data·x^n divided by
/// the generator (x − α^0)(x − α^1)…(x − α^(n−1)).
struct ReedSolomonEncoder: Sendable {
    /// Generator coefficients without the leading 1, highest degree first.
    let generator: [UInt8]

    init(degree: Int) {
        precondition((1...255).contains(degree), "Reed–Solomon degree out of range")
        // Start from the polynomial 1 and multiply in one root at a time; subtraction is XOR in GF(2^8).
        var poly: [UInt8] = [1]
        for i in 0..<degree {
            let root = GF256.exp[i]
            var next = [UInt8](repeating: 0, count: poly.count + 1)
            for (j, coefficient) in poly.enumerated() {
                next[j] ^= coefficient
                next[j + 1] ^= GF256.multiply(coefficient, root)
            }
            poly = next
        }
        generator = Array(poly.dropFirst())
    }

    func remainder(of data: [UInt8]) -> [UInt8] {
        var remainder = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ remainder[0]
            remainder.removeFirst()
            remainder.append(0)
            if factor != 0 {
                for i in 0..<generator.count {
                    remainder[i] ^= GF256.multiply(generator[i], factor)
                }
            }
        }
        return remainder
    }
}
