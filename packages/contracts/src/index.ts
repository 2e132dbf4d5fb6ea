export * from './auth';
export * from './envelope';
export * from './health';
export * from './oem';
export * from './projects';
