/// Turns a payload into the final codeword sequence: byte-mode bit stream, padding, Reed–Solomon blocks,
/// interleaving (ISO/IEC 18004 §7.4–7.6).
enum QRCodewords {
    static func build(bytes: [UInt8], version: Int, level: QRCode.ErrorCorrection) -> [UInt8] {
        let data = dataCodewords(bytes: bytes, version: version, level: level)
        return interleave(data: data, version: version, level: level)
    }

    static func dataCodewords(bytes: [UInt8], version: Int, level: QRCode.ErrorCorrection) -> [UInt8] {
        let capacity = QRTables.dataCodewords(version: version, level: level)
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: QRTables.byteCountBits(version: version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        // Terminator of up to four zeros, then zeros to the byte boundary.
        bits.append(0, count: min(4, capacity * 8 - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var codewords = bits.bytes
        // The alternating pad bytes keep a short payload from leaving long light runs in the symbol.
        var pad: UInt8 = 0xEC
        while codewords.count < capacity {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// Splits the data into blocks (the later blocks one codeword longer when it does not divide evenly),
    /// adds each block's error correction, and interleaves column-wise so a local smudge spreads its damage
    /// over many blocks.
    static func interleave(data: [UInt8], version: Int, level: QRCode.ErrorCorrection) -> [UInt8] {
        let blockCount = QRTables.blockCount[level]![version - 1]
        let ecLength = QRTables.ecCodewordsPerBlock[level]![version - 1]
        let total = QRTables.totalCodewords(version: version)
        let shortBlockCount = blockCount - total % blockCount
        let shortDataLength = total / blockCount - ecLength

        let encoder = ReedSolomonEncoder(degree: ecLength)
        var dataBlocks: [[UInt8]] = []
        var ecBlocks: [[UInt8]] = []
        var offset = 0
        for block in 0..<blockCount {
            let length = shortDataLength + (block < shortBlockCount ? 0 : 1)
            let slice = Array(data[offset..<(offset + length)])
            offset += length
            dataBlocks.append(slice)
            ecBlocks.append(encoder.remainder(of: slice))
        }
        precondition(offset == data.count, "data codewords do not match the block structure")

        var result: [UInt8] = []
        result.reserveCapacity(total)
        for column in 0...shortDataLength {
            for block in dataBlocks where column < block.count {
                result.append(block[column])
            }
        }
        for column in 0..<ecLength {
            for block in ecBlocks { result.append(block[column]) }
        }
        return result
    }
}

/// Bits appended most significant first, as the QR bit stream is defined.
struct BitBuffer {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0

    mutating func append(_ value: Int, count bitCount: Int) {
        precondition(bitCount >= 0 && (bitCount >= Int.bitWidth - 1 || value >> bitCount == 0), "value wider than its field")
        for i in stride(from: bitCount - 1, through: 0, by: -1) {
            if count % 8 == 0 { bytes.append(0) }
            if (value >> i) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(0x80 >> (count % 8)) }
            count += 1
        }
    }
}
