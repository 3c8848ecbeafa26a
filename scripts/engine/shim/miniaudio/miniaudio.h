/*
 * miniaudio.h — a stub written for simbench, NOT the real miniaudio.
 *
 * Go module zips omit every vendor/ directory, so the copy of miniaudio that
 * llama.cpp keeps under vendor/miniaudio is missing when Ollama is built with
 * `go install github.com/ollama/ollama@vX`. The only user is
 * tools/mtmd/mtmd-helper.cpp, which decodes audio attachments for multimodal
 * models. simbench never sends audio, so this header declares exactly the
 * types and functions that file uses and makes every decode fail: an audio
 * attachment is then rejected as "not a valid audio file".
 */
#ifndef SIMBENCH_MINIAUDIO_STUB_H
#define SIMBENCH_MINIAUDIO_STUB_H

#include <stddef.h>

#ifndef MA_API
#define MA_API static
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef int ma_result;
typedef unsigned int ma_uint32;
typedef unsigned long long ma_uint64;

#define MA_SUCCESS 0
#define MA_NOT_IMPLEMENTED (-29)

typedef enum { ma_format_unknown = 0, ma_format_f32 = 5 } ma_format;

typedef struct {
    ma_format format;
    ma_uint32 channels;
    ma_uint32 sampleRate;
} ma_decoder_config;

typedef struct {
    ma_decoder_config config;
} ma_decoder;

MA_API ma_decoder_config ma_decoder_config_init(ma_format format, ma_uint32 channels, ma_uint32 sampleRate) {
    ma_decoder_config c;
    c.format = format;
    c.channels = channels;
    c.sampleRate = sampleRate;
    return c;
}

MA_API ma_result ma_decoder_init_memory(const void *data, size_t size, const ma_decoder_config *config, ma_decoder *decoder) {
    (void)data;
    (void)size;
    if (decoder != NULL && config != NULL) {
        decoder->config = *config;
    }
    return MA_NOT_IMPLEMENTED;
}

MA_API ma_result ma_decoder_get_length_in_pcm_frames(ma_decoder *decoder, ma_uint64 *length) {
    (void)decoder;
    if (length != NULL) {
        *length = 0;
    }
    return MA_NOT_IMPLEMENTED;
}

MA_API ma_result ma_decoder_read_pcm_frames(ma_decoder *decoder, void *frames, ma_uint64 count, ma_uint64 *read) {
    (void)decoder;
    (void)frames;
    (void)count;
    if (read != NULL) {
        *read = 0;
    }
    return MA_NOT_IMPLEMENTED;
}

MA_API ma_result ma_decoder_uninit(ma_decoder *decoder) {
    (void)decoder;
    return MA_SUCCESS;
}

#ifdef __cplusplus
}
#endif

#endif /* SIMBENCH_MINIAUDIO_STUB_H */
